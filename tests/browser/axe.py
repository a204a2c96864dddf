"""axe-core in a Playwright page: inject the vendored engine, run it, keep what blocks people.

The engine is `vendor/axe.min.js` (axe-core from the npm registry, see `vendor/README.md`); its
sha256 is checked before every injection, so a changed or truncated file fails loudly instead of
checking the pages with an engine nobody vetted. The run covers WCAG 2.0 and 2.1 levels A and AA
and axe's best practices; `serious_violations` keeps the results whose impact is serious or
critical, which is what the browser tests refuse (`test_accessibility.py`).
"""

import hashlib
import json
from functools import cache
from pathlib import Path

AXE_VERSION = "4.14.1"
AXE_SHA256 = "29348999450cdf2849a8e70b7912fc2da85a849da39c0d0d5394f51d4a9ed95c"
AXE_PATH = Path(__file__).resolve().parent / "vendor" / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]
BLOCKING = ("serious", "critical")


class AxeFileMismatch(AssertionError):
    """The vendored axe.min.js is not the file vendor/README.md names."""


@cache
def axe_source(path: Path = AXE_PATH, sha256: str = AXE_SHA256) -> str:
    """The engine's source, once its sha256 is the vendored one."""
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != sha256:
        raise AxeFileMismatch(
            f"{path} has sha256 {digest}, expected {sha256} (axe-core {AXE_VERSION}, "
            "tests/browser/vendor/README.md): re-vendor it with `npm pack` or update both"
        )
    return data.decode("utf-8")


def run_axe(page, *, tags: list[str] = TAGS) -> dict:
    """Inject axe into PAGE (unless it is there already) and return `axe.run()`'s results."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.add_script_tag(content=axe_source())
    version = page.evaluate("() => window.axe.version")
    assert version == AXE_VERSION, f"the page's axe is {version}, not the vendored {AXE_VERSION}"
    options = {"runOnly": {"type": "tag", "values": tags}, "resultTypes": ["violations"]}
    return page.evaluate("(options) => window.axe.run(document, options)", options)


def serious_violations(results: dict) -> list[dict]:
    """The violations whose impact is serious or critical."""
    return [v for v in results["violations"] if v.get("impact") in BLOCKING]


def minor_violations(results: dict) -> list[dict]:
    """The rest (moderate, minor): reported, not failed on."""
    return [v for v in results["violations"] if v.get("impact") not in BLOCKING]


def describe(violations: list[dict], *, nodes_per_rule: int = 5) -> str:
    """A readable list: rule, impact, help, and for each element its selector, a snippet of its
    HTML and axe's own summary of what to fix."""
    lines = []
    for violation in violations:
        lines.append(
            f"- {violation['id']} ({violation.get('impact')}): {violation['help']}"
            f" [{len(violation['nodes'])} element(s)] {violation.get('helpUrl', '')}"
        )
        for node in violation["nodes"][:nodes_per_rule]:
            target = " ".join(json.dumps(t) if not isinstance(t, str) else t for t in node["target"])
            html = " ".join(node.get("html", "").split())
            if len(html) > 160:
                html = html[:157] + "..."
            lines.append(f"    at {target}")
            lines.append(f"       {html}")
            summary = " ".join(node.get("failureSummary", "").split())
            if summary:
                lines.append(f"       {summary[:300]}")
        if len(violation["nodes"]) > nodes_per_rule:
            lines.append(f"    ... and {len(violation['nodes']) - nodes_per_rule} more")
    return "\n".join(lines)


def assert_accessible(page, where: str = "") -> dict:
    """Run axe on PAGE and fail with the serious and critical violations, if any."""
    results = run_axe(page)
    minor = minor_violations(results)
    if minor:  # shown with the test's output (pytest -rP), never a failure
        print(f"axe: moderate or minor on {where or page.url}:\n{describe(minor, nodes_per_rule=2)}")
    blocking = serious_violations(results)
    assert not blocking, (
        f"axe found {len(blocking)} serious or critical violation(s) on {where or page.url}:\n"
        + describe(blocking)
    )
    return results
