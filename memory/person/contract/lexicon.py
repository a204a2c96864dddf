"""The phrasings the contract observer reads (memory/person/contract/__init__.py): explicit
requests, complaints, corrections and reactions to pushback, each a regular expression over
the lower-cased message with the dimension it moves, the direction (-1 or +1 on that
dimension's scale) and how much one occurrence weighs.

The patterns are built from parts (verbs, intensifiers, adjectives) rather than listed
sentences, so "keep your answers tight", "be a bit more concise" and "make it shorter" are the
same request. `flips` marks a request that a preceding negation turns around ("don't be so
blunt" asks for the opposite of "be blunt"); patterns whose wording already holds the
negation ("don't sugarcoat") do not flip.
"""

import re
from dataclasses import dataclass

REQUEST, COMPLAINT, CORRECTION, PUSHBACK = "request", "complaint", "correction", "pushback"

_INTENSIFIER = (
    r"(?:(?:a )?(?:bit|little|lot|tad) |more |much |very |really |super |extra |as |so |way |far |"
    r"totally |completely |brutally |fully |properly |100% )*"
)
_BE = r"(?:be|being|get|stay|keep it|keep (?:it|this|things|them|answers|your answers|replies|your replies|responses"
_BE += r"|your responses|explanations)|make (?:it|this|them|that|answers|your answers)|answer|reply|respond|write|talk)"
_COPULA = (
    r"(?:that'?s|that is|that was|this is|this was|it'?s|it is|it was|you'?re|you are|you were|you'?ve been|"
    r"answers? (?:is|are|was|were)|reply (?:is|was)|responses? (?:is|are|was|were)|explanation (?:is|was)|"
    r"way|far|much|a bit|a little|kind of|sort of|getting|bit)"
)


@dataclass(frozen=True)
class Cue:
    dimension: str
    direction: int  # -1 or +1 on the dimension's scale (memory/person/contract DIMENSIONS)
    weight: float
    kind: str
    pattern: re.Pattern
    flips: bool = False


def _cue(dimension: str, direction: int, pattern: str, *, kind=REQUEST, weight=1.0, flips=False) -> Cue:
    return Cue(dimension, direction, weight, kind, re.compile(pattern), flips)


BRIEF_WORDS = r"(?:brief|briefer|short|shorter|concise|succinct|terse|tight|crisp|compact|to the point|pithy)"
DETAIL_WORDS = (
    r"(?:detailed|thorough|comprehensive|in[- ]depth|deeper|exhaustive|elaborate|specific|longer|complete)"
)
BLUNT_WORDS = r"(?:blunt|blunter|direct|frank|candid|straightforward|straight|honest|upfront|up front|brutal|harsh|critical)"
GENTLE_WORDS = (
    r"(?:gentle|gentler|kind|kinder|nice|nicer|tactful|diplomatic|patient|gracious|soft|softer|polite|"
    r"considerate|encouraging|supportive|friendlier|warmer)"
)
ASKED_THING = (
    r"(?:command|commands|code|snippet|answer|fix|one[- ]liner|result|number|steps|query|regex|syntax|link|"
    r"name|diff|patch|yes or no|gist|bottom line|solution|config|line|function|sql|output|list|verdict)"
)

CUES: tuple[Cue, ...] = (
    # --- depth: -1 brief … +1 detailed ---------------------------------------------------
    _cue("depth", -1, rf"\b{_BE} {_INTENSIFIER}{BRIEF_WORDS}\b", flips=True),
    _cue(
        "depth",
        -1,
        r"\b(?:short|brief|quick|concise|one[- ]line|one[- ]word|simple|shorter|tl;?dr) (?:answers?|version|replies|reply|responses?|summary)\b",
    ),
    _cue(
        "depth",
        -1,
        rf"\b(?:just|only|simply)\s+(?:(?:give|show|tell|send|paste|need|want|write|print)(?: me)? )?(?:the |a |an |me the )?{ASKED_THING}s?\b",
    ),
    _cue(
        "depth",
        -1,
        r"\b(?:no|without|skip|skip all|cut|cut out|drop|spare me|leave out|lose) (?:the |all the |any |your )?(?:explanations?|preamble|intro(?:duction)?s?|background|theory|fluff|details|essays?|lectures?|walls? of text|commentary|backstory|waffle|filler|padding|exposition)\b",
    ),
    _cue("depth", -1, r"\btl;?dr\b|\btldr\b"),
    _cue(
        "depth", -1, r"\b(?:cut|get|skip) (?:right )?to the (?:chase|point)\b|\bget to it\b|\bbottom line\b"
    ),
    _cue(
        "depth",
        -1,
        r"\b(?:in|within|under|with) (?:one|a single|1|two|2|three|3|a few|a couple of|few) (?:lines?|sentences?|words?|bullets?|bullet points?|paragraphs?)\b|\bone[- ]liner\b",
    ),
    _cue(
        "depth",
        -1,
        rf"\b{_COPULA} (?:too|overly|way too|far too) (?:long|verbose|wordy|long[- ]winded|much text|detailed|much detail|dense)\b",
        kind=COMPLAINT,
    ),
    _cue(
        "depth",
        -1,
        r"\b(?:less|fewer) (?:verbose|wordy|words|text|detail|details|explanation|rambling)\b",
        kind=REQUEST,
    ),
    _cue(
        "depth",
        -1,
        r"\b(?:wall of text|walls of text|word salad|long[- ]winded|stop rambling|you(?:'re| are) rambling|too much to read|didn'?t read)\b",
        kind=COMPLAINT,
    ),
    _cue(
        "depth",
        -1,
        r"\b(?:stop|quit|no need to keep|don'?t keep) (?:over-?)?(?:explaining|elaborating|rambling|repeating yourself)\b|\b(?:don'?t|do not|no need to|you don'?t (?:need|have) to) (?:over-?)?explain\b",
    ),
    # +1 detailed
    _cue("depth", 1, rf"\b{_BE} {_INTENSIFIER}{DETAIL_WORDS}\b", flips=True),
    _cue(
        "depth",
        1,
        r"\b(?:more|further|additional|extra|a lot more|lots more|some more|deeper) (?:details?|depth|context|explanation|background|examples?|info(?:rmation)?|nuance|specifics|elaboration|reasoning)\b",
        flips=True,
    ),
    _cue(
        "depth",
        1,
        r"\bin (?:more |great |greater |full |much more |real |gory |)(?:detail|depth)\b",
        flips=True,
    ),
    _cue(
        "depth",
        1,
        r"\b(?:elaborate|expand on (?:that|this|it|the)|flesh (?:it|that|this) out|go deeper|dig deeper|deep[- ]dive|unpack (?:that|this|it)|go into (?:more )?detail)\b",
        flips=True,
    ),
    _cue(
        "depth",
        1,
        r"\b(?:explain|tell me|walk me through|describe|show me)\b(?:\s+\w+){0,4}?\s+(?:in detail|thoroughly|properly|fully|further|the reasoning|your reasoning|why it works|how it works under the hood|the why)\b",
    ),
    _cue(
        "depth",
        1,
        rf"\b{_COPULA} (?:too|overly|way too|far too) (?:short|brief|terse|vague|shallow|superficial|thin|high[- ]level|sparse|simplistic)\b",
        kind=COMPLAINT,
    ),
    _cue(
        "depth",
        1,
        r"\b(?:don'?t|do not|no need to) (?:hold back|skimp|over-?simplify|simplify|dumb (?:it|this|that) down|skip (?:the |any )?details|leave anything out)\b",
    ),
    _cue(
        "depth",
        1,
        r"\b(?:longer|fuller|more complete|more thorough|more detailed) (?:answers?|explanations?|version|replies|responses?)\b",
    ),
    _cue(
        "depth",
        1,
        r"^(?:is that all|that'?s it|anything else|and\??|more please|tell me more)\s*[?!.]*\s*$",
        weight=0.6,
    ),
    # --- directness: -1 diplomatic … +1 blunt -------------------------------------------
    _cue("directness", 1, rf"\b{_BE} {_INTENSIFIER}{BLUNT_WORDS}\b", flips=True),
    _cue(
        "directness",
        1,
        r"\b(?:don'?t|do not|dont|no need to|stop|quit|without|no) (?:sugar-?\s?coat(?:ing)?|candy-?\s?coat(?:ing)?|beat(?:ing)? around the bush|hedg(?:e|ing)|soften(?:ing)? (?:it|the blow|things)|mince words|mincing words|pull(?:ing)? (?:any )?punches|tiptoe(?:ing)?|tip-?toe(?:ing)?|flatter(?:ing)? me|butter(?:ing)? me up|waffl(?:e|ing)|diplomatic|dance around)",
    ),
    _cue(
        "directness",
        1,
        r"\b(?:brutal(?:ly)? honest(?:y)?|straight talk|tell it like it is|give it to me straight|tell me straight|straight up|no bs|no bullshit|cut the crap|no sugar-?coating|no hedging|no caveats|no disclaimers|no niceties|no platitudes|no fluff|skip the (?:pleasantries|small talk|niceties|compliments)|spare me the (?:pleasantries|niceties|compliments)|don'?t be nice|stop being (?:so )?(?:nice|polite|diplomatic|careful))\b",
    ),
    _cue(
        "directness",
        1,
        r"\b(?:straight|direct|honest|frank|plain) (?:answer|reply|response|opinion|feedback|take|assessment)\b|\bwhat do you really think\b|\bbe real with me\b",
    ),
    # -1 diplomatic
    _cue("directness", -1, rf"\b{_BE} {_INTENSIFIER}{GENTLE_WORDS}\b", flips=True),
    _cue(
        "directness",
        -1,
        r"\b(?:go easy on me|easy on me|break it (?:to me )?gently|soften the blow|more gently|a bit gentler|kinder please|with more tact)\b",
    ),
    _cue(
        "directness",
        -1,
        r"\b(?:that was|that'?s|that is|you'?re|you are|you were|you sound|sounds?|too|so|kind of|rather|a bit|unnecessarily|needlessly) (?:harsh|rude|mean|condescending|patronizing|patronising|cold|brutal|aggressive|abrasive|curt|snippy|dismissive|blunt|judgmental|judgemental|preachy)\b",
        kind=COMPLAINT,
    ),
    _cue("directness", -1, r"\bno need to be (?:so )?(?:rude|harsh|mean|blunt|snarky)\b", kind=COMPLAINT),
    # --- pushback: -1 avoid (do what is asked) … +1 welcome --------------------------------
    _cue(
        "pushback",
        1,
        r"\b(?:push back|pushback|challenge (?:me|my|this|that|it|the|these)|poke holes|pick (?:it|this|that|my \w+) apart|tear (?:it|this|that|my \w+) apart|(?:play )?devil'?s advocate|criticise|criticize|critique|roast (?:it|this|my)|find (?:the )?(?:flaws|holes|weak spots)|point out (?:any |the |my )?(?:flaws|problems|issues|mistakes|weaknesses)|tell me (?:if|when|where) i'?m wrong|tell me if (?:this|that|it) is (?:a )?(?:bad|dumb|terrible)|correct me|call me out|disagree with me|argue with me|stress[- ]test|second[- ]guess me)\b",
        flips=True,
    ),
    _cue(
        "pushback",
        1,
        r"\b(?:don'?t|do not|stop|quit) (?:just )?(?:agree(?:ing)?|nod(?:ding)? along|tell(?:ing)? me what i want to hear|be(?:ing)? a yes[- ]man|validat(?:e|ing) (?:me|everything)|flatter(?:ing)? me)\b",
    ),
    _cue(
        "pushback",
        1,
        r"\b(?:what am i missing|what could go wrong|am i wrong|is this a bad idea|where'?s the catch|sanity[- ]check)\b",
        weight=0.5,
    ),
    _cue(
        "pushback",
        1,
        r"\b(?:fair point|good point|fair enough|valid point|great point|you'?re right|you are right|you'?re correct|you are correct|i stand corrected|good catch|nice catch|i hadn'?t thought of that|hadn'?t considered|didn'?t think of that|you convinced me|point taken|i see your point|ok,? (?:let'?s|we'?ll|i'?ll) do it your way|you have a point|that'?s a good call|thanks for pushing back|glad you (?:said|flagged|caught) that)\b",
        kind=PUSHBACK,
        weight=0.5,
    ),
    _cue(
        "pushback",
        -1,
        r"\b(?:do it my way|(?:just )?do (?:it |this |that )?(?:the way|how|like) i (?:said|asked|told you|wanted)|just do (?:it|what i (?:said|asked|told you))|do what i (?:said|asked|told you)|i didn'?t ask (?:for )?(?:your|for an?) (?:opinion|advice|input|alternatives?|suggestions?|lecture|review)|stop arguing|don'?t argue|stop (?:second[- ]guessing|questioning|lecturing|preaching|moralizing|moralising|pushing back|challenging me)|don'?t (?:second[- ]guess|question|lecture|preach to|challenge) me|i know what i'?m doing|(?:it'?s )?not your (?:call|decision)|that'?s not up to you|spare me the (?:lecture|sermon|warnings?)|i don'?t need (?:a |your )?(?:lecture|sermon|opinion|advice|alternatives?|warnings?)|i'?m not asking (?:for )?your opinion|i(?:'ve| have)? already decided|my mind is made up|just answer the question|no alternatives)\b",
        kind=PUSHBACK,
    ),
    # --- pace: -1 slow … +1 fast ----------------------------------------------------------
    _cue(
        "pace",
        -1,
        r"\b(?:slow down|slow it down|not so fast|one (?:step|thing|bit|piece|question|change|part) at a time|step[- ]by[- ]step|baby steps|bit by bit|little by little|take it slow|(?:go|explain|talk|move|take it) (?:a bit |much |)(?:slower|slowly)|let me catch up|give me a (?:sec|second|minute|moment)|let'?s not rush|don'?t rush|too much at once|overwhelm(?:ed|ing)|break (?:it|this|that) down|explain like i'?m (?:five|5)|eli5)\b",
    ),
    _cue(
        "pace",
        -1,
        rf"\b(?:{_COPULA}|going|moving) (?:too|way too|a bit too) (?:fast|quick)\b|\byou lost me\b|\bi'?m (?:lost|confused|a beginner|new to (?:this|that|it)|still learning)\b|\bi don'?t (?:understand|follow|get it)\b|\bwhat do you mean\b",
        kind=COMPLAINT,
        weight=0.7,
    ),
    _cue(
        "pace",
        1,
        r"\b(?:speed (?:it |this |things )?up|hurry(?: up)?|(?:go|move|work|answer|reply) (?:a bit |much |)(?:faster|quicker)|let'?s move on|move on|moving on|skip ahead|skip (?:the )?basics|skip to the|jump to the|get on with it|keep it moving|pick up the pace|we don'?t have all day|no hand-?holding|don'?t (?:need to )?hold my hand|i (?:already )?know (?:this|that|the basics|how that works|all that)|i'?m familiar with|i(?:'ve| have) done this before|you don'?t (?:need|have) to explain (?:the )?basics|no need to explain (?:the )?basics)\b",
    ),
    _cue(
        "pace",
        1,
        r"^(?:next|continue|go on|keep going|carry on|ok next|okay next|done,? next|and then|then what|what'?s next|next step)\s*[?!.]*\s*$",
        weight=0.5,
    ),
)

# "no, that's not what I asked": the previous answer missed; what it missed is read from the
# other cues in the message, else from the previous answer's length (memory/person/contract)
CORRECTION_CUE = re.compile(
    r"\b(?:that'?s not what i (?:asked|meant|wanted|said|need(?:ed)?|was asking)|not what i (?:asked|meant|wanted|need(?:ed)?)(?: for)?|"
    r"you misunderstood|you misread|you(?:'re| are) not listening|you didn'?t (?:answer|read|listen|get it)|"
    r"that'?s not (?:it|my question|the question|what i'?m asking)|read (?:my|the) question again|"
    r"wrong (?:question|thing)|answer the question|that doesn'?t answer|(?:you )?missed the point|"
    r"i didn'?t ask (?:for|about) (?:that|this|all that))\b"
    r"|^(?:no[,.!]+\s*)?i (?:asked|said|wanted|meant|just wanted|only wanted)\b"
)
# a preceding negation that turns a `flips` request around, within the same clause
NEGATION = re.compile(
    r"(?:\b(?:don'?t|do not|dont|never|no need to|not|stop|quit|without|less|no longer)\s+(?:\w+\s+){0,2})$"
)
# the assistant disagreed, warned or proposed something else: the reply that follows takes
# or refuses pushback
ASSISTANT_PUSHBACK = re.compile(
    r"\b(?:i'?d (?:push back|advise against|recommend against|caution against|reconsider|suggest (?:instead|not|against))|"
    r"i (?:disagree|would not|wouldn'?t (?:do|recommend))|i don'?t (?:think (?:that|this|it)'?s|recommend)|are you sure|"
    r"(?:that|this) (?:might|may|could|would|will) (?:not work|break|cause|backfire|lose)|be careful|careful:|"
    r"(?:that|this)'?s (?:risky|dangerous|not a good idea|a bad idea|not recommended)|a (?:better|safer) (?:approach|option|idea|way)|"
    r"instead,? (?:i'?d|you (?:could|should|might))|i'?d (?:strongly )?(?:recommend|suggest) (?:not|against)|"
    r"one concern|a caveat|the downside|before you do that)\b"
)

# style: what marks a polite, hedged message and what a terse command
SOFTENERS = re.compile(
    r"\b(?:please|pls|could you|would you|would it be possible|if you don'?t mind|sorry|i was wondering|maybe|"
    r"perhaps|kindly|if possible|i think|i feel|i hope|thank you|thanks|appreciate)\b"
)
IMPERATIVE_START = re.compile(
    r"^(?:fix|give|show|tell|write|make|run|change|add|remove|delete|stop|do|use|send|list|rename|move|"
    r"update|drop|replace|convert|generate|find|check|set|install|deploy|revert|undo|just)\b"
)
SHOUTING = re.compile(r"\b(?:wtf|ffs|fuck\w*|shit|damn\w*|crap|bloody)\b")
ACKNOWLEDGEMENT = re.compile(
    r"^(?:ok(?:ay)?|k|kk|thanks?|thank you|thx|ty|cool|great|nice|perfect|got it|yes|no|yep|yeah|nope|"
    r"sure|done|fine|alright|right|ah|oh|hm+|lol|wow)\b[\s.!,]*(?:thanks?|thank you|thx)?[\s.!]*$"
)
CONTINUATION = re.compile(
    r"^(?:next|continue|go on|keep going|carry on|ok next|okay next|done,? next|and then|then what|what'?s next|next step)\b"
)
WHY_QUESTION = re.compile(r"\b(?:why|how come|how does|how do|what'?s the reason|explain|what happens if)\b")
