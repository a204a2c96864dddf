"""Changes: what a sentence says is no longer true, and what replaced it.

One frame for every kind of fact instead of a negative pattern per key: the sentence's change
cue ("not … anymore", "no longer", "stopped …ing", "used to", "switched from X to Y", "moved
out of", "left my job with", a pet that died or was put down) is cut out, the old state is
restated as a plain first-person sentence ("I am on lithium", "I use Jira", "I have a dog
named Rex"), and the ordinary fact rules read it. Whatever they find there is retracted; a
"switched to Y" or "put me on Y" is restated the same way and becomes the new fact.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable, Iterator

from chat.reflection.capture import NAME
from chat.reflection.lexicon import PET_SPECIES, RELATION_WORDS
from chat.reflection.ops import FactOp, FactRetraction
from chat.reflection.text import Sentence, read_sentence
from memory.temporal import lemmas

I = re.IGNORECASE  # noqa: E741

# Keys a change can retract. Preferences are left to the negated-preference rule ("I don't like
# sushi anymore" → dislikes), names and birthdays do not change this way.
RETRACTABLE = {
    "location", "employer", "job_title", "school", "medications", "diet", "os", "editor", "tools",
    "programming_languages", "pets", "partner", "health_conditions", "religion", "politics",
    "allergies", "languages.learning",
}  # fmt: skip

_ENDS = (
    r"and|but|so|because|since|after|now|anymore|any\s+more|no\s+more|these\s+days|nowadays|for\s+(?:me|good|now)|"
    r"lol|though|tho|apparently|actually|honestly|sadly|thankfully|luckily|officially|finally|either"
)
_END = rf"(?=\s*(?:[,.;!?]|\s-\s|$|\s+(?:{_ENDS})\b))"
# after a thing given up, a time phrase ends it too: "dropped Asana back in June"
_THING_END = (
    rf"(?=\s*(?:[,.;!?]|\s-\s|$|\s+(?:{_ENDS}|in|on|at|for|as|last|this|back|ago|(?:\w+\s+){1, 2}ago)\b))"
)
_REST = rf"(?P<rest>[^,.;!?]+?){_END}"
_SPECIES = "|".join(sorted((re.escape(s) for s in PET_SPECIES), key=len, reverse=True))

# "take the propranolol": the thing without its article, as the fact rules read it
_ARTICLE_AFTER_VERB = re.compile(r"^(\w+\s+)(?:the|my|our)\s+", I)
# how one names oneself: "don't consider myself Christian any more", "not identifying as a Tory now"
_SELF_VIEW = re.compile(
    r"^(?:(?:consider|call|see|count|identify)(?:ing)?\s+(?:myself|ourselves)(?:\s+as)?|identify(?:ing)?\s+as)\s+",
    I,
)
# a stretch of time a state has not held: "for a couple of years", "for six months", "in ages"
_STRETCH = (
    r"for\s+(?:over\s+|about\s+|nearly\s+|almost\s+|more\s+than\s+)?(?:a|an|a\s+couple\s+of|a\s+few|several|many|\w+)\s+"
    r"(?:years?|yrs?|months?|weeks?)|for\s+(?:ages|years|months|a\s+(?:while|long\s+time))|in\s+(?:years|ages|months|a\s+(?:while|long\s+time)|(?:a\s+few|\w+)\s+(?:years|months))"
)
# an organisation named by its capitalised words: "Acme", "Morgan Stanley", "H&M"
_ORG = r"(?P<rest>(?-i:[A-Z])[\w&.'-]*(?:\s+(?:of\s+|&\s+)?(?-i:[A-Z])[\w&.'-]*)*)"
_MOVE = re.compile(r"\b(?:moved|moving|relocated|relocating|emigrated|packed\s+up)\b", I)

_PARTNERS = r"(?:wife|husband|partner|boyfriend|girlfriend|bf|gf|fianc[ée]+|spouse)"
_NOT_TOGETHER = re.compile(r"\bnot\s+(?:with\s+\w+|together)\s+(?:anymore|any\s+more)\b", I)
_SWITCH = re.compile(
    r"\b(?:switched|moved|changed|went|migrated|converted)\s+(?:over\s+)?(?:me\s+)?"
    r"(?:(?:careers?|jobs?|roles?|fields?|professions?|tack)\s+)?(?:from|off(?:\s+of)?)\s+(?:(?:an?|being\s+an?)\s+)?(?P<rest>[\w .+#-]+?)\s+to\b",
    I,
)
# (pattern, how the old state reads as a plain sentence)
_OLD_STATE: list[tuple[re.Pattern[str], Callable[[re.Match[str]], str | list[str]]]] = [
    # "not on lithium any more", "we don't use Jira anymore", "not vegan any more"
    (
        re.compile(
            r"(?:\b(?:I|we)\s+(?P<aux>am|are|do|does)\s+|^(?:(?:so|apparently|turns\s+out|actually)\s+)*)not\s+"
            r"(?P<rest>[^,.;!?]+?)\s+(?:anymore|any\s+more|no\s+more|these\s+days|nowadays|after\s+all)\b",
            I,
        ),
        lambda m: (
            f"I am {_SELF_VIEW.sub('', m['rest'])}"
            if _SELF_VIEW.match(m["rest"])
            else [f"I {m['rest']}", "I " + _ARTICLE_AFTER_VERB.sub(r"\1", m["rest"])]
            if (m["aux"] or "").lower() in ("do", "does")
            else _workplace(m["rest"], f"I am {m['rest']}")
        ),
    ),
    # "not with Sam any more", "we're not together anymore": a partner, not an employer
    (
        re.compile(r"\b(?:I|we)\s+(?:am|are)\s+not\s+(?:with\s+\w+|together)\s+(?:anymore|any\s+more)\b", I),
        lambda m: "",
    ),
    # "I am off lithium now", "came off the pill last spring"
    (
        re.compile(
            rf"\b(?:I|we)\s+(?:am\s+|are\s+|have\s+been\s+|came\s+|come\s+|got\s+|went\s+)(?:now\s+)?off\s+"
            rf"(?:(?P<the>the|my)\s+)?(?P<rest>[^,.;!?]+?){_THING_END}",
            I,
        ),
        lambda m: [f"I am on {m['the'] + ' ' if m['the'] else ''}{m['rest']}", f"I am on {m['rest']}"],
    ),
    # done to the speaker: "the doctor took me off statins", "got taken off the pill"
    (
        re.compile(rf"\b(?:took|taken|taking|got|have|has)\s+(?:me|us|taken)\s+off\s+{_REST}", I),
        lambda m: f"I am on {m['rest']}",
    ),
    # a perfect negated up to a start: "have not worked at Oracle since March", "haven't been
    # living in Lyon since 2021", "not been with the bank since the merger"
    (
        re.compile(
            r"(?:\b(?:I|we)\s+)?(?:have|has|had)\s*(?:n'?t|\s+not)\s+(?:been\s+)?(?P<rest>[^,.;!?]+?)\s+(?:since|"
            # or for a stretch of time: "haven't been vegan for a couple of years", "in ages"
            rf"{_STRETCH})\b",
            I,
        ),
        lambda m: _since_state(m["rest"]),
    ),
    # "no longer employed by the council", "no longer vegan"
    (
        re.compile(rf"(?:\b(?:I|we)\s+(?P<aux>am\s+|are\s+|have\s+)?|^)no\s+longer\s+{_REST}", I),
        lambda m: (
            f"I work {m['rest']}"
            if re.match(r"(?:at|with|for)\s", m["rest"], I)
            else f"I am {m['rest']}"
            if (m["aux"] or "").strip().lower() in ("am", "are")
            else f"I {m['rest']}"
            if m["aux"]
            else [f"I {m['rest']}", f"I am {m['rest']}"]  # the subject dropped: either frame
        ),
    ),
    # "stopped taking the pill", "quit using Jira"
    (
        re.compile(
            rf"\b(?:I|we)\s+(?:have\s+|had\s+)?(?:just\s+|finally\s+)?(?:stopped|quit|gave\s+up|given\s+up)\s+"
            rf"(?P<ving>\w+ing)\s+{_REST}",
            I,
        ),
        lambda m: f"I am {m['rest']}" if m["ving"].lower() == "being" else f"I am {m['ving']} {m['rest']}",
    ),
    # a trade given up by its verb: "quit teaching", "retired from nursing", "not freelancing any
    # more" — the one who does it is the title ("teacher", "nurse", "freelancer")
    (
        re.compile(
            r"\b(?:stopped|quit|gave\s+up|given\s+up|retired\s+from|left|not(?=\s+[a-z]+ing\s+(?:anymore|any\s+more|no\s+more)\b))"
            r"\s+(?P<rest>[a-z]+ing)"
            r"(?=\s*(?:[,.;!?]|$)|\s+(?:anymore|any\s+more|no\s+more|after|in|last|this|for|and|but|now|ago|years|a)\b)",
            I,
        ),
        lambda m: _trade(m["rest"]),
    ),
    # a past state with its end: "I was a paramedic until 2023", "worked at Boots till last
    # spring", "lived in Rome up until I was ten", "was at Google for years before I left"
    (
        re.compile(
            r"\b(?:I|we)\s+(?:had\s+been|have\s+been|was|were|(?P<verb>lived|worked))\s+(?P<rest>[^,.;!?]+?)"
            r"(?:\s+for\s+(?:\w+\s+){1,3}?(?:years?|months?|ages|a\s+while|decades?))?"
            r"\s+(?:(?:up\s+)?(?:until|till|til)\b|before\s+(?:I|we)\s+(?:left|quit|moved|retired|stopped|was\s+(?:let\s+go|laid\s+off|fired|made\s+redundant)))",
            I,
        ),
        lambda m: _until_state(m["verb"], m["rest"]),
    ),
    # a past state denied now: "I was a smoker for ages, but not now", "was at Acme, but no longer"
    (
        re.compile(
            r"\b(?:I|we)\s+(?P<verb>was|were|lived|worked)\s+(?P<rest>[^,.;!?]+?)(?:\s+for\s+(?:years|ages|a\s+while|a\s+long\s+time|"
            r"(?:a\s+few|many|\w+)\s+(?:years|months)))?\s*,?\s+but\s+(?:(?:I\s+am\s+|we\s+are\s+)?not\s+(?:any\s*more|now|these\s+days|nowadays)|"
            r"(?:I\s+am\s+|we\s+are\s+|I\s+|we\s+)?no\s+longer|(?:I|we)\s+(?:do\s+not|don't)\s+(?:any\s*more|now))\b",
            I,
        ),
        lambda m: (
            f"I am {m['rest']}"
            if m["verb"].lower() in ("was", "were")
            else f"I {m['verb'].lower()[:-1] if m['verb'].lower() == 'lived' else 'work'} {m['rest']}"
        ),
    ),
    # "used to be a teacher", "used to be vegan"
    (re.compile(rf"\b(?:I|we)\s+used\s+to\s+be\s+{_REST}", I), lambda m: f"I am {m['rest']}"),
    (re.compile(rf"\b(?:I|we)\s+used\s+to\s+(?!be\b){_REST}", I), lambda m: f"I {m['rest']}"),
    # "went from Ritalin to Concerta", "moved from Vim to Helix"
    (_SWITCH, lambda m: [f"I use {m['rest']}. I am on {m['rest']}", f"I am a {m['rest']}"]),
    # a job handed back: "gave in my notice to Acme", "resigned from the council"
    (
        re.compile(
            r"\b(?:(?:handed|put|gave|turned)\s+in\s+(?:my\s+)?(?:notice|resignation)|resigned)\s+(?:at|to|from|with)\s+"
            rf"{_ORG}",
            I,
        ),
        lambda m: f"I work at {m['rest']}",
    ),
    # what one was: "my old job at Acme", "my previous employer, Initech", "former nurse",
    # "formerly a chef", "retired teacher now"
    (
        re.compile(
            r"\bmy\s+(?:old|previous|former|last|ex)[- ](?:job|employer|role|position|company|workplace)\s*,?\s+(?:at|with|was)?\s*"
            rf"{_ORG}",
            I,
        ),
        lambda m: f"I work at {m['rest']}",
    ),
    (
        re.compile(
            r"(?:^|\b(?:I\s+am\s+|I\s+was\s+)(?:an?\s+)?)(?:former|formerly\s+an?|previously\s+an?|once\s+an?|ex-)\s*"
            rf"(?P<rest>[a-z][a-z ]*?){_THING_END}",
            I,
        ),
        lambda m: f"I am a {m['rest']}",
    ),
    # "moved out of Leeds", "moved away from Cork" (not "moving out": that is a plan), "moved to
    # Leeds from Cork", "packed up from Turin", "relocated from Cork"
    (
        re.compile(
            rf"\b(?:(?:moved|moved\s+back|relocated|packed\s+up)\s+(?:and\s+left\s+)?(?:out\s+of|away\s+from|from)|"
            rf"(?:moved|relocated)\s+(?:back\s+)?(?:to|over\s+to)\s+[^,.;!?]+?\s+from|"
            # arrived from somewhere: "came over from Lagos", "emigrated here from Perth"
            rf"(?:came|emigrated|immigrated)\s+(?:over\s+|here\s+|across\s+)*from|"
            # a home sold or left: "sold our house in Hull", "gave up the flat in Leeds", "left my
            # parents' house in Nantes", "packed up the whole flat in Oslo"
            rf"(?:sold|gave\s+up|let\s+go\s+of|moved\s+out\s+of|left|packed\s+up|cleared\s+out\s+of)\s+"
            rf"(?:(?:(?:the|my|our)\s+)?(?:[\w-]+\s+and\s+)?[\w-]+(?:'s|s')|the|my|our)\s+(?:old\s+|little\s+|tiny\s+|whole\s+)?"
            rf"(?:flat|house|apartment|place|home|condo|studio|life|room|bedsit)\s+in)"
            rf"\s+(?=(?-i:[A-Z]))(?P<rest>[^,.;!?]+?)(?=\s+to\b|{_THING_END[3:]}",
            I,
        ),
        lambda m: f"I live in {m['rest']}",
    ),
    # "ditched paleo", "gave up on Italian", "dropped Jira", "no more Perl", "outgrew a cashew
    # allergy", "left the Baptist church", "cancelled my Green membership", "stepped down as
    # head chef": the thing given up, read in every frame a fact can have
    (
        re.compile(
            rf"\b(?:ditched|dropped|abandoned|binned|gave\s+up(?:\s+on)?|given\s+up(?:\s+on)?|quit|kicked|"
            rf"uninstalled|deleted|removed|unsubscribed\s+from|deactivated|got\s+rid\s+of|"
            rf"outgrew|outgrown|left(?=\s+(?:the|my)\s+\w+\s+(?:church|faith|party)\b)|cancel+ed|stepped\s+down\s+(?:as|from)|(?:\bno\s+|^)more|done\s+with|finished\s+with)\s+"
            # not a pause: "done with Python for today"
            rf"(?![^,.;!?]*\bfor\s+(?:today|now|tonight|the\s+(?:day|night|week|weekend)))"
            rf"(?:(?:my|the|our|being|a|an)\s+)?(?P<rest>[^,.;!?]+?){_THING_END}",
            I,
        ),
        lambda m: _given_up(m["rest"]),
    ),
    # "ex-Methodist", "ex-vegan", "my ex-husband Ravi"
    (re.compile(rf"\bex-(?!{_PARTNERS}\b)(?P<rest>[a-z]+)\b", I), lambda m: f"I am {m['rest']}"),
    # "having fish again after two years vegan", "back on cheese after a year of being vegan"
    (
        re.compile(
            r"\b(?:again|back\s+(?:on|to))\b.*?\bafter\s+(?:\w+\s+){1,2}(?:years?|months?|weeks?)\s+"
            r"(?:of\s+)?(?:being\s+)?(?P<rest>[a-z]+)\b",
            I,
        ),
        lambda m: f"I am {m['rest']}",
    ),
    # a career ended: "retired after 30 years as a firefighter", "quit being a chef", "left
    # nursing after a decade as a midwife"
    (
        re.compile(
            r"\b(?:retired|retiring|left|quit|stopped|finished)\b[^,.;!?]*?\b(?:after|following)\s+(?:\w+\s+){1,3}?"
            rf"(?:years?|decades?|months?)\s+as\s+(?P<rest>an?\s+[a-z][a-z ]*?){_THING_END}",
            I,
        ),
        lambda m: f"I am {m['rest']}",
    ),
    # "formerly at Deutsche Bank", "previously with the council"
    (
        re.compile(
            rf"(?:^|\b(?:I\s+was\s+|I\s+am\s+))(?:formerly|previously)\s+(?:at|with)\s+(?:the\s+)?{_ORG}", I
        ),
        lambda m: f"I work at {m['rest']}",
    ),
    # "dropped out of Imperial", "quit uni at Leeds": a school left before the end
    (
        re.compile(rf"\bdropped\s+out\s+(?:of|from)\s+(?:the\s+)?{_ORG}", I),
        lambda m: f"I study at {m['rest']}",
    ),
    # "took early retirement from Siemens": the job ended
    (
        re.compile(rf"\b(?:retired|took\s+(?:early\s+)?retirement)\s+from\s+(?:the\s+)?{_ORG}", I),
        lambda m: f"I work at {m['rest']}",
    ),
    # a condition healed: "the reflux is gone", "my eczema has cleared up"
    (
        re.compile(
            r"\b(?:the|my)\s+(?P<rest>[a-z][a-z -]{1,30}?)\s+(?:is|has|'s)\s+(?:completely\s+|totally\s+|finally\s+|all\s+)?"
            r"(?:gone|cleared(?:\s+up)?|healed|cured|better\s+now|in\s+remission)\b",
            I,
        ),
        lambda m: f"I have {m['rest']}",
    ),
    # the speaker healed: "I've recovered from the anorexia", "in remission from lymphoma",
    # "got over my asthma", "cured of the shingles" (not "recovering": that is still so)
    (
        re.compile(
            r"\b(?:(?:fully\s+|finally\s+|completely\s+)?(?:recovered|cured|free)\s+(?:from|of)|in\s+remission\s+from|got\s+over)\s+"
            rf"(?:(?:the|my|a|an)\s+)?(?P<rest>[a-z][a-z -]{{1,30}}?){_THING_END}",
            I,
        ),
        lambda m: f"I have {m['rest']}",
    ),
    # "lost my position at Acme", "lost my role in the Intel cuts"
    (
        re.compile(
            rf"\b(?:lost|lose)\s+my\s+(?:job|position|role)\s+(?:at|with|in\s+the)\s+(?P<rest>(?-i:[A-Z])[^,.;!?]*?)"
            rf"(?:\s+(?:layoffs?|cuts|restructur\w*|redundanc\w*))?{_THING_END}",
            I,
        ),
        lambda m: "I work at " + re.sub(r"\s+(?:layoffs?|cuts)$", "", m["rest"]),
    ),
    # "left Acme", "quit my position with the council", "gave up my post at the museum",
    # "finished my contract with Arup", "wrapped up my internship at the BBC"
    (
        re.compile(
            rf"\b(?:(?:left|quit|leaving|quitting|gave\s+up|given\s+up|finished|ended|wrapped\s+up|walked\s+out\s+of)\s+"
            rf"my\s+(?:\w+\s+)?(?:job|position|role|post|contract|placement|internship|apprenticeship|stint)\s+(?:at|with)\s+|"
            rf"(?:left|quit|leaving|quitting)\s+(?=(?-i:[A-Z]))|(?:finished|finishing)\s+(?:up\s+)?(?:at|with)\s+(?=(?-i:[A-Z]))|(?:laid\s+off|fired|let\s+go|made\s+redundant)\s+(?:from|by|at)\s+(?=(?-i:[A-Z])))"
            rf"(?P<rest>[^,.;!?]+?){_END}",
            I,
        ),
        # a place left in a move: "left Rome in May and moved to Bari"
        lambda m: [f"I live in {m['rest']}"] if _MOVE.search(m.string) else f"I work at {m['rest']}",
    ),
]


def _trade(gerund: str) -> list[str]:
    """The titles a trade's gerund names, as sentences: "teaching" → "I am a teacher",
    "nursing" → "I am a nurse" (the fact rules keep only real titles)."""
    lemma = (lemmas(gerund.lower()).get("VERB") or (gerund.lower()[:-3],))[0]
    stem = lemma[:-1] if lemma.endswith("e") else lemma
    return [f"I am a {lemma}r. I am a {stem}er. I am a {lemma}. I am a {stem}or"]


def _workplace(rest: str, state: str) -> list[str]:
    """A state denied, and when it names an organisation by its capitals ("not at Barclays any
    more", "not for the NHS now"), the job there too."""
    if m := re.match(r"^(?:at|for)\s+(?P<org>(?-i:[A-Z])\S*(?:\s+(?-i:[A-Z])\S*)*)$", rest, I):
        return [state, f"I work at {m['org']}"]
    return [state]


def _until_state(verb: str | None, rest: str) -> list[str]:
    """The state a "was … until" ended. Being somewhere is a stay, not a home ("was in Leeds
    until Friday"), and being at a place a job only when it is named ("at Boots", not "at the
    pub until 2am")."""
    if verb:
        return _since_state(f"{verb} {rest}")
    if re.match(r"in\s", rest, I) or re.match(r"(?:at|with|for)\s+(?-i:[^A-Z])", rest, I):
        return []
    return _since_state(rest)


def _since_state(rest: str) -> list[str]:
    """The state a negated perfect denies: "been at Acme" → "I work at Acme", "living in Lyon"
    → "I am living in Lyon" (the fact rules read both), "smoked" → "I smoked"."""
    if m := re.match(r"^(?:work(?:ed|ing)?\s+)?(?:at|with|for)\s+(?P<org>.+)$", rest, I):
        return [f"I work at {m['org']}"]
    if m := re.match(r"^(?:liv(?:ed|ing)\s+)?in\s+(?P<place>.+)$", rest, I):
        return [f"I live in {m['place']}"]
    return [f"I am {rest}", f"I {rest}"]


_OBJECT_TAIL = re.compile(r"\s+(?:church|faith|diet|habit|subscription|account)$", I)


def _given_up(thing: str) -> list[str]:
    """The old state behind a thing given up, as restatements tried in turn: the first that a
    fact rule reads is the one retracted (an employer or a party only when nothing else fits)."""
    thing = thing.strip()
    if m := re.match(r"^(?:job|position|role|post)\s+(?:at|with)\s+(?P<org>.+)$", thing, I):
        return [f"I work at {m['org']}"]
    if m := re.match(r"^(?P<what>.+?)\s+allergy$", thing, I):
        what = m["what"] + ("s" if m["what"].lower().endswith("nut") else "")
        return [f"I am allergic to {what}"]
    if m := re.match(r"^(?P<party>.+?)\s+(?:party\s+)?membership$", thing, I):
        return [f"I vote {m['party']}"]
    core = _OBJECT_TAIL.sub("", thing)
    frames = [f"I use {core}. I am {core}. I am on {core}. I am learning {core}. I am a {core}"]
    if core[:1].isupper() and core == thing:  # not "my Hulu subscription": that is no employer
        frames.append(f"I work at {core}")
    return frames


# "they switched me over to insulin", "changed to Zed", "put me on lithium"
_NEW_STATE = re.compile(
    r"\b(?:switched|moved|changed|put|started)\s+(?:me\s+|us\s+)?(?:over\s+)?"
    r"(?:from\s+[\w .+#-]+?\s+)?(?:to|on)\s+(?P<rest>[^,.;!?]+?)" + _END,
    I,
)

# Pets that died: "our old cat Tom died", "the vet put Rex to sleep", "RIP to our goldfish",
# "our rabbit passed on", "we lost our cat last week".
_PET = rf"(?:my|our)\s+(?:[\w-]+\s+){{0,2}}?(?P<species>{_SPECIES})(?:\s*,?\s+{NAME})?"
_DEATH = [
    re.compile(
        rf"\b{_PET}\s+(?:(?:has|had|just|sadly|finally)\s+)*(?:died|passed(?:\s+away|\s+on)?|was\s+put\s+down|"
        r"(?:got|was)\s+(?:hit|run\s+over|killed)|"
        r"had\s+to\s+be\s+put\s+down|was\s+put\s+to\s+sleep|is\s+gone|crossed\s+the\s+rainbow\s+bridge)\b",
        I,
    ),
    re.compile(rf"\b(?:RIP|rest\s+in\s+peace)\s+(?:to\s+)?{_PET}", I),
    re.compile(rf"\b(?:lost|buried|said\s+goodbye\s+to)\s+{_PET}", I),
    re.compile(rf"\bput\s+(?:{_PET}|{NAME.replace('?P<v>', '?P<v2>')})\s+(?:down|to\s+sleep)\b", I),
    re.compile(
        rf"\b{NAME.replace('?P<v>', '?P<v2>')}\s+(?:(?:has|just|sadly)\s+)*(?:died|passed\s+away|crossed\s+the\s+rainbow\s+bridge)\b"
    ),
]
_NAME2 = NAME.replace("?P<v>", "?P<v2>")
_DEATH += [
    # "Rex was put down", "Tigger had to be put to sleep"
    re.compile(rf"\b{_NAME2}\s+(?:got|was|has\s+been|had\s+to\s+be)\s+put\s+(?:down|to\s+sleep)\b"),
    # "we lost Bruno, our beagle", "said goodbye to Pip, my hamster"
    re.compile(
        rf"\b(?:lost|buried|said\s+goodbye\s+to|had\s+to\s+put\s+down)\s+{NAME},?\s+(?:my|our)\s+(?:[\w-]+\s+){{0,2}}?(?P<species>{_SPECIES})\b",
        I,
    ),
    # "the cat we had to rehome, Tigger", "the dog I gave away, Rex"
    re.compile(
        rf"\b(?:the|my|our)\s+(?P<species>{_SPECIES})\s+(?:that\s+)?(?:we|I)\s+(?:had\s+to\s+)?"
        rf"(?:give\s+up|gave\s+up|give\s+away|gave\s+away|re-?home|re-?homed|put\s+down|lose|lost)\s*,?\s+{NAME}",
        I,
    ),
    # "found Bubbles, my goldfish, dead", "found our hamster lifeless today"
    re.compile(
        rf"\bfound\s+{NAME},?\s+(?:my|our)\s+(?:[\w-]+\s+){{0,2}}?(?P<species>{_SPECIES}),?\s+(?:\w+\s+)?"
        r"(?:belly[- ]up|dead|lifeless)\b",
        I,
    ),
    re.compile(rf"\bfound\s+{_PET},?\s+(?:\w+\s+)?(?:belly[- ]up|dead|lifeless)\b", I),
    # "Bruno, our beagle, died"
    re.compile(
        rf"\b{NAME},\s+(?:my|our)\s+(?:[\w-]+\s+){{0,2}}?(?P<species>{_SPECIES}),?\s+(?:(?:has|had|just|sadly|finally)\s+)*"
        r"(?:died|passed(?:\s+away|\s+on)?|was\s+put\s+down|was\s+put\s+to\s+sleep|crossed\s+the\s+rainbow\s+bridge)\b",
        I,
    ),
]
# Pets given to someone: "gave our rabbit Clover to my cousin", "handed the cat over to a shelter"
_GIVEN_TO = re.compile(
    rf"\b(?:gave|handed|passed)\s+(?:the|my|our)\s+(?:[\w-]+\s+){{0,2}}?(?P<species>{_SPECIES})(?:\s*,?\s+{NAME})?"
    r"\s*,?\s+(?:over\s+|on\s+)?to\s+(?:a|an|the|my|our|some|his|her|their|(?-i:[A-Z]))",
    I,
)
# Pets given away: "re-homed our hamsters, Nib and Dot", "gave away my parrot"
_REHOMED = re.compile(
    rf"\b(?:re-?homed|(?:had|have)\s+to\s+re-?home|gave\s+away|gave\s+up|surrendered|sold)\s+(?:the|my|our)\s+(?:[\w-]+\s+){{0,2}}?"
    rf"(?P<species>{_SPECIES})s?(?:,?\s+(?-i:(?P<a>[A-Z][a-z]+))(?:,?\s+and\s+(?-i:(?P<b>[A-Z][a-z]+)))?)?",
    I,
)
_DOG_BREEDS = {
    "lab", "labrador", "golden retriever", "poodle", "beagle", "corgi", "husky", "pug", "dachshund",
    "german shepherd", "border collie", "terrier", "chihuahua", "bulldog", "french bulldog", "frenchie",
    "shiba", "shiba inu", "greyhound", "spaniel", "cocker spaniel", "rottweiler", "doberman", "schnauzer",
    "pomeranian", "shih tzu", "collie", "whippet", "labradoodle", "goldendoodle", "cockapoo", "dalmatian",
    "mutt", "rescue dog", "puppy",
}  # fmt: skip
_CAT_BREEDS = {"tabby", "siamese", "maine coon", "ragdoll", "sphynx", "bengal", "rescue cat", "kitten"}

# Breakups: "Lena and I separated", "broke up with Sam", "divorced Ravi", "my ex-husband Ravi";
# "we split" names the partner elsewhere in the message ("… forget what I said about Ines").
_SPLIT = r"(?:split|broke\s+up|separated|divorced|called\s+it\s+(?:quits|off|a\s+day)|parted\s+ways|went\s+(?:our|separate)\s+(?:separate\s+)?ways|ended\s+(?:it|things))"
_BREAKUP = [
    re.compile(
        rf"\b(?:me|I)\s+and\s+{NAME}\s+(?:have\s+|had\s+|finally\s+|officially\s+)*{_SPLIT}\b",
        I,
    ),
    re.compile(
        rf"\b{NAME}\s+and\s+(?:I|me)\s+(?:have\s+|had\s+|finally\s+|officially\s+)*{_SPLIT}\b",
        I,
    ),
    re.compile(
        rf"\b(?:broke\s+up|split(?:\s+up)?|separated|divorced)\s+(?:from\s+|with\s+)?(?:my\s+{_PARTNERS}\s*,?\s+)?{NAME}(?!\s+(?-i:[A-Z]))",
        I,
    ),
    # the break-up as a noun or gerund: "my divorce from Tom", "since breaking up with Lucy",
    # "single again after five years with Omar"
    re.compile(
        rf"\b(?:(?:divorce|separation|break-?up|split)\s+(?:from|with)|(?:breaking|splitting)\s+up\s+with|divorcing\s+(?=(?:my\s+{_PARTNERS}\s*,?\s+)?(?-i:[A-Z])))\s*"
        rf"(?:my\s+{_PARTNERS}\s*,?\s+)?{NAME}",
        I,
    ),
    re.compile(rf"\bsingle\s+(?:again\s+)?(?:after|since)\s+[^,.;!?]*?\bwith\s+{NAME}", I),
    # the partner named with their role: "me and my girlfriend Zoe split up", "my husband
    # Mark and I are separating"
    re.compile(
        rf"\b(?:me|I)\s+and\s+my\s+{_PARTNERS}\s*,?\s+{NAME}\s*,?\s+(?:have\s+|had\s+|finally\s+|officially\s+|just\s+)*{_SPLIT}\b",
        I,
    ),
    re.compile(
        rf"\bmy\s+{_PARTNERS}\s*,?\s+{NAME}\s*,?\s+and\s+(?:I|me)\s+(?:have\s+|had\s+|finally\s+|officially\s+|just\s+|are\s+)*"
        rf"(?:{_SPLIT}|separating|splitting\s+up|breaking\s+up|getting\s+divorced|over|done|through)\b",
        I,
    ),
    # left by them: "Emma left me in May", "Tom dumped me" (not "left me a voicemail")
    re.compile(
        rf"\b{NAME}\s+(?:(?:has|just|finally)\s+)*(?:dumped|ditched|divorced|(?:left|walked\s+out\s+on)(?=\s+me\s*(?:[,.;!?]|$|"
        r"(?:for|last|after|yesterday|this)\b|in\s+(?:the\s+)?(?:spring|summer|autumn|fall|winter|(?:19|20)\d\d|"
        + "|".join(calendar.month_name[1:])
        + r")\b)))\s+me\b",
        I,
    ),
    # "Priya is my ex now", "Sam's now my ex-boyfriend"
    re.compile(r"\b(?-i:(?P<v>[A-Z][a-zà-ÿ-]+))(?:\s+is|'s)\s+(?:now\s+)?my\s+ex\b", I),
    re.compile(rf"\bex-?{_PARTNERS}\s*,?\s+{NAME}", I),
    # a partner who died: "my wife Ana passed last year", "lost my husband, Tom"
    re.compile(
        rf"\b(?:my|our)\s+(?:late\s+)?{_PARTNERS}\s*,?\s+{NAME}\s*,?\s+(?:(?:has|had|sadly|just)\s+)*(?:died|passed(?:\s+away|\s+on)?)\b",
        I,
    ),
    re.compile(rf"\b(?:lost|buried|widowed\s+by)\s+my\s+{_PARTNERS}\s*,?\s+{NAME}", I),
    re.compile(rf"\bmy\s+late\s+{_PARTNERS}\s*,?\s+{NAME}", I),
    re.compile(rf"\bmy\s+ex\s*,?\s+{NAME}", I),
    re.compile(rf"\b{NAME},?\s+(?:my|our)\s+ex(?:-?{_PARTNERS})?\b", I),
]
_WE_SPLIT = re.compile(rf"\b(?:we|we\s+have|we\s+just)\s+(?:split(?:\s+up)?|{_SPLIT})\b", I)
_PARTNER_NAMED = re.compile(rf"\b(?:about|with|from|and|me\s+and)\s+{NAME}\b")


def _breakups(s: Sentence, message: str) -> list[FactRetraction]:
    found = []
    for pattern in _BREAKUP:
        for m in pattern.finditer(s.text):
            # "Mum left me …" is no partner leaving
            if m["v"].lower() not in _NOT_NAMES and m["v"].lower() not in RELATION_WORDS:
                found.append(FactRetraction("partner", m["v"]))
    if not found and _WE_SPLIT.search(s.text):
        names = [m["v"] for m in _PARTNER_NAMED.finditer(message) if m["v"].lower() not in _NOT_NAMES]
        found.append(FactRetraction("partner", names[0] if names else ""))
    return found


_NOT_NAMES = {"i", "me", "my", "we", "the", "a", "an", "him", "her", "them", "it", "this", "that", "everyone"}
_SPECIES_ANYWHERE = re.compile(rf"\b(?P<species>{_SPECIES})s?\b", I)


def _pet_value(m: re.Match[str], message: str) -> str | None:
    groups = m.groupdict()
    species, name = groups.get("species"), groups.get("v") or groups.get("v2")
    if not species:
        # a name only ("they put Rex to sleep"): a pet when the message says which animal it was
        found = _SPECIES_ANYWHERE.search(message)
        if not found or not name:
            return None
        species = found["species"]
    species = species.lower()
    species = "dog" if species in _DOG_BREEDS else "cat" if species in _CAT_BREEDS else species
    return f"{name} ({species})" if name else species


def changes(
    s: Sentence, message: str, facts_of: Callable[[Sentence], list[FactOp | FactRetraction]]
) -> tuple[list[FactRetraction], list[FactOp]]:
    """(retractions, new facts) a sentence's change cues support; `facts_of` runs the fact rules."""
    retracted: list[FactRetraction] = []
    new: list[FactOp] = []
    for pattern, old_state in _OLD_STATE:
        for m in pattern.finditer(s.text):
            # the speaker's own change, not "Tom switched from Java to Kotlin"
            if _NOT_TOGETHER.search(m.group(0)):
                retracted.append(FactRetraction("partner", ""))
                continue
            if not m.groupdict().get("rest") or not _said_of_speaker(s.text, m.start("rest"), m.start()):
                continue
            states = old_state(m)
            for state in [states] if isinstance(states, str) else states:
                found = [
                    FactRetraction(fact.key, fact.value)
                    for fact in facts_of(read_sentence(state))
                    if isinstance(fact, FactOp) and fact.key in RETRACTABLE
                ]
                retracted += found
                if found:
                    break
    for m in _NEW_STATE.finditer(s.text):
        if not _said_of_speaker(s.text, m.start("rest")):
            continue
        restated = read_sentence(f"I use {m['rest']}. I am on {m['rest']}")
        new += [f for f in facts_of(restated) if isinstance(f, FactOp) and f.key in RETRACTABLE]
    for pattern in (*_DEATH, _GIVEN_TO):
        for m in pattern.finditer(s.text):
            if value := _pet_value(m, message):
                retracted.append(FactRetraction("pets", value))
    for m in _REHOMED.finditer(s.text):
        species = m["species"].lower()
        species = "dog" if species in _DOG_BREEDS else "cat" if species in _CAT_BREEDS else species
        names = [n for n in (m["a"], m["b"]) if n]
        retracted += [FactRetraction("pets", f"{n} ({species})") for n in names] or [
            FactRetraction("pets", species)
        ]
    if any(r.key == "partner" for r in retracted) or _NOT_TOGETHER.search(s.text):
        retracted = [r for r in retracted if r.key != "partner"] + (
            _breakups(s, message) or [r for r in retracted if r.key == "partner"]
        )
    else:
        retracted += _breakups(s, message)
    return _unique(retracted), new


_RELATIONS = "|".join(sorted((re.escape(r) for r in RELATION_WORDS), key=len, reverse=True))
# who does things in a sentence: pronouns, "my sister", and a name opening a clause ("Tom switched …")
_SUBJECT = re.compile(
    rf"\b(?:I|we|he|she|they)\b|\b(?:my|our|his|her|their)\s+(?:{_RELATIONS})\b|(?:^|[,;]\s*)(?-i:[A-Z][a-z]+)(?=\s+[a-z]+(?:ed|s)\b)",
    I,
)


def _said_of_speaker(text: str, pos: int, start: int | None = None) -> bool:
    """The nearest subject before `pos` is "I" or "we", or the change was done to the speaker
    ("the doctor switched me to …")."""
    if re.search(r"\b(?:me|us)\s+(?:over\s+)?(?:to|on|from|off)\s+$", text[:pos]):
        return True
    # the subject comes before the cue's verb: "left my parents' house in …" is the speaker's move
    before = pos if start is None else start
    subjects = [m.group(0).lower() for m in _SUBJECT.finditer(text, 0, pos) if m.start() < before]
    if not subjects:  # chat drops the subject: "dropped Asana", "ex-vegan", "quit Acme in May"
        return len(text[: pos if start is None else start].split()) <= 4
    return subjects[-1] in ("i", "we")


def _unique(items: list[FactRetraction]) -> list[FactRetraction]:
    seen: dict[tuple[str, str], FactRetraction] = {}
    for item in items:
        for value in item.value.split(", ") if item.value else [""]:
            seen.setdefault((item.key, value.lower()), FactRetraction(item.key, value))
    return list(seen.values())


_FORMER = re.compile(r"^(?:former|ex-|old|previous|retired)\s*", I)


def _pet_name(value: str) -> str:
    m = re.match(r"^(?P<name>[^(]+?)\s*\(", value)
    return f"name:{m['name'].lower()}" if m else ""


def without_retracted(facts: list[FactOp], retracted: list[FactRetraction]) -> Iterator[FactOp]:
    """`facts` minus what the same sentence retracts ("stopped taking the pill" is not a
    pill fact; a dog that died is not a pet)."""
    gone = {(r.key, r.value.lower()) for r in retracted}
    # a named pet is one pet whatever its species is called: "Rolo (dog)" is "Rolo (spaniel)"
    gone |= {(r.key, _pet_name(r.value)) for r in retracted if r.key == "pets" and _pet_name(r.value)}
    for fact in facts:
        # "former nurse" read as a title is the title retracted
        items = [
            i
            for i in fact.value.split(", ")
            if (fact.key, _FORMER.sub("", i).lower()) not in gone
            and not _FORMER.match(i)
            and not (fact.key == "pets" and _pet_name(i) and (fact.key, _pet_name(i)) in gone)
        ]
        if not items:
            continue
        if len(items) < len(fact.value.split(", ")):
            fact = FactOp(
                fact.key, ", ".join(items), fact.pinned, fact.keywords, fact.confidence, fact.category
            )
        yield fact
