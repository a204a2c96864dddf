"""Which programs, services and commands a conversation relies on: commands in backticks or
code blocks whose first word is a known program, and names from a small vocabulary of
development tools (kept small on purpose: "go", "make" or "node" are English words first, so
they count only as the first word of a command)."""

from __future__ import annotations

import re

# command-line programs: a backtick span or a code line starting with one is a command
PROGRAMS = {
    "git", "gh", "docker", "docker-compose", "podman", "kubectl", "helm", "terraform", "ansible", "make",
    "cmake", "npm", "npx", "yarn", "pnpm", "node", "deno", "bun", "pip", "pip3", "pipx", "uv", "poetry",
    "python", "python3", "pytest", "tox", "nox", "ruff", "black", "mypy", "flake8", "isort", "pre-commit",
    "django-admin", "celery", "redis-cli", "psql", "pg_dump", "pg_restore", "sqlite3", "mysql", "mongosh",
    "nginx", "gunicorn", "uvicorn", "daphne", "cargo", "rustc", "rustup", "go", "gradle", "mvn", "jest",
    "vitest", "webpack", "vite", "eslint", "prettier", "tsc", "curl", "wget", "jq", "ssh", "scp", "rsync",
    "systemctl", "journalctl", "brew", "apt", "apt-get", "dnf", "conda", "jupyter", "aws", "gcloud", "az",
    "heroku", "flyctl", "vercel", "netlify", "alembic", "playwright", "cypress", "tmux", "sed", "awk",
    "grep", "find", "tar", "openssl", "certbot", "ffmpeg", "manage.py", "./manage.py", "bash", "sh",
}  # fmt: skip
# names recognised in prose (case-insensitive) → how they are written
NAMES = {
    "git": "git", "github actions": "GitHub Actions", "gitlab ci": "GitLab CI", "docker": "Docker",
    "docker compose": "Docker Compose", "kubernetes": "Kubernetes", "kubectl": "kubectl", "helm": "Helm",
    "terraform": "Terraform", "ansible": "Ansible", "npm": "npm", "yarn": "Yarn", "pnpm": "pnpm",
    "node.js": "Node.js", "nodejs": "Node.js", "pip": "pip", "uv": "uv", "poetry": "Poetry", "pytest": "pytest",
    "tox": "tox", "ruff": "ruff", "black": "Black", "mypy": "mypy", "pre-commit": "pre-commit",
    "django": "Django", "flask": "Flask", "fastapi": "FastAPI", "celery": "Celery", "redis": "Redis",
    "postgres": "PostgreSQL", "postgresql": "PostgreSQL", "sqlite": "SQLite", "mysql": "MySQL",
    "mongodb": "MongoDB", "nginx": "nginx", "gunicorn": "Gunicorn", "uvicorn": "Uvicorn", "cargo": "Cargo",
    "rust": "Rust", "golang": "Go", "typescript": "TypeScript", "react": "React", "vue": "Vue",
    "svelte": "Svelte", "webpack": "webpack", "vite": "Vite", "jest": "Jest", "vitest": "Vitest",
    "eslint": "ESLint", "prettier": "Prettier", "curl": "curl", "jq": "jq", "rsync": "rsync",
    "systemd": "systemd", "homebrew": "Homebrew", "conda": "conda", "jupyter": "Jupyter", "pandas": "pandas",
    "numpy": "NumPy", "sqlalchemy": "SQLAlchemy", "alembic": "Alembic", "playwright": "Playwright",
    "selenium": "Selenium", "cypress": "Cypress", "sentry": "Sentry", "grafana": "Grafana",
    "prometheus": "Prometheus", "jenkins": "Jenkins", "circleci": "CircleCI", "aws": "AWS", "s3": "S3",
    "heroku": "Heroku", "vercel": "Vercel", "netlify": "Netlify", "cloudflare": "Cloudflare",
    "rabbitmq": "RabbitMQ", "kafka": "Kafka", "elasticsearch": "Elasticsearch", "graphql": "GraphQL",
    "openssl": "OpenSSL", "ffmpeg": "ffmpeg", "tmux": "tmux", "vs code": "VS Code", "vscode": "VS Code",
}  # fmt: skip
_NAME_RE = re.compile(
    r"(?<![\w.-])(" + "|".join(re.escape(n) for n in sorted(NAMES, key=len, reverse=True)) + r")(?![\w-])",
    re.I,
)
_BACKTICK = re.compile(r"`([^`\n]{2,120})`")
_PROMPT = re.compile(r"^\s*(?:\$|>|PS>|#)\s+")


def _command(text: str) -> str | None:
    """`text` when it reads as a command line of a known program ("pytest -x tests/")."""
    line = _PROMPT.sub("", text.strip())
    words = line.split()
    if len(words) < 2 or words[0].lower() not in PROGRAMS:
        return None
    if re.search(r"(?:Error|Exception|Traceback)\b", line):
        return None
    return " ".join(line.split())[:120]


def commands_in(code: list[str], text: str) -> list[str]:
    """The command lines of a message: backtick spans and code lines of known programs."""
    found = [_command(span) for span in _BACKTICK.findall(text or "")]
    found += [_command(line) for line in code]
    return list(dict.fromkeys(f for f in found if f))


# names that are English words first: they count only written as the tool writes itself
WORDLIKE = {"black", "rust", "react", "vue", "jest", "celery", "poetry", "helm", "uv", "tox", "vite"}
# a sentence turning a tool down: "no GraphQL", "not running Spark for this", "X is overkill"
_REFUSED = re.compile(
    r"\b(?:no|not|never|without|instead of|rather than|overkill|against|avoid|rejected?|drop(?:ped|ping)?|"
    r"do not want|does not want|(?:do|does) not need|keeps? pushing|away from)\b",
    re.I,
)
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")


def tool_names(text: str) -> list[str]:
    """The known tools a message names, as they are written, leaving out those named in a
    sentence that turns something down."""
    prose = _BACKTICK.sub(lambda m: m.group(0) if _command(m.group(1)) is None else "", text or "")
    found = []
    for sentence in _SENTENCE.split(prose.replace("n't", " not")):
        if _REFUSED.search(sentence):
            continue
        for m in _NAME_RE.finditer(sentence):
            key = m.group(1).lower()
            if key in WORDLIKE and m.group(1) != NAMES[key]:
                continue
            found.append(NAMES[key])
    return list(dict.fromkeys(found))
