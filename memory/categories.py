"""Consent categories (DESIGN §3): which sensitive kinds of personal data a text is about.

The slugs match the ConsentCategory rows seeded by memory/migrations/0005. This is a safety
check, not a nicety: a false positive costs the person one question, a miss stores a secret
without asking. So the lexicons are broad and lean toward asking, and they work on any text —
a fact's value, a note, or a whole chat message that produced neither.

Contract:

* ``categories(text)`` — the set of every category the text mentions (empty when none);
* ``classify_category(text)`` — the most sensitive one, in CATEGORY_PRIORITY order, or "".

How a text is read: lower-cased, apostrophes straightened, and the phrases that only look
sensitive ("code review", "child process", "sick of", "bank holiday" …) blanked out; then each
category's patterns are searched, and single words of six letters or more that are one typo away
from a category's keyword ("passwrod", "docter", "girlfirend") count as that keyword. A family
word next to another sensitive category (someone else's illness, debt or coming out) is also
relationships: other people's private lives are.
"""

from __future__ import annotations

import re
from functools import lru_cache

CATEGORY_PRIORITY = (
    "credentials",
    "government_ids",
    "health",
    "sexual_life",
    "minors",
    "finances",
    "religion",
    "politics",
    "precise_location",
    "relationships",
)

# --- what only looks sensitive -------------------------------------------------------------------

_NEUTRAL = re.compile(
    r"(?<![\w-])(?:"
    # code that is not a secret
    r"(?:error|status|exit|return|response|http|promo|discount|coupon|"
    r"voucher|referral|gift|source|qr|bar|dress|morse|colou?r|product|airport|iata|tracking|"
    r"language|country|sample|example|test|legacy|machine|byte|op|unicode|ascii|emoji) ?codes?|"
    r"codes? (?:review|reviews|reviewer|base|bases|name|names|smell|freeze|owner|owners|style|"
    r"block|blocks|snippet|snippets|path|paths|coverage|quality|golf)|codebase|"
    r"pin(?:ned|ning)?(?= (?:this|that|it|the|a|my|our|your|them|these|those)\b)|pins? (?:diode|diodes|header|headers|"
    r"out|layout|drop)|map pin|pinned|pinning|pin ?tab|"
    r"login (?:page|form|screen|button|flow|bug|endpoint|api|issue|issues|error|redirect|route|view|modal)|"
    r"password (?:manager|managers|policy|policies|reset flow|field|fields|hashing|strength)|"
    r"(?:child|parent)[ -](?:process|processes|node|nodes|element|elements|class|classes|theme|themes|"
    r"component|components|table|tables|row|rows|task|tasks|thread|threads|window|widget|view|views|"
    r"span|spans|item|items|ticket|tickets|issue|issues|page|pages|directory|dir|folder)|"
    r"kids these days|kid you not|"
    # one's own childhood, a pet or a grown-up called a baby, prayer as a figure of speech
    r"(?:as|when i was|since i was|back when i was|growing up as) (?:a |an )?(?:little )?(?:kid|child|teen|teenager)|"
    r"(?:such a|big|total|cry) ?baby(?! (?:boy|girl|is|was|due|shower|bump|steps))|baby (?:steps|spinach|carrots|"
    r"back ribs|oil|monitor app)|(?:a lot of|and a|wing and a|say a) prayers?|pray for me|"
    r"(?:icu|er|a&e|hospital|ward|school|agency) nurse|nurse at|"
    r"doctor who|dr\.? who|"
    r"sick of|sick and tired|that'?s sick|"
    r"intermittent fasting|"
    r"killing it|health ?checks?|health endpoint|healthcheck\w*|sanity check|"
    r"(?:business|trading|sparring|dance|tennis|squash|lab|coding|pairing|pair|channel|integration|"
    r"technology|tech|delivery|strategic|implementation|launch|reseller|cloud) partners?|"
    r"partners? in crime|partners? (?:on|in|at) (?:the|this|that|a|our|my) (?:paper|project|firm|"
    r"company|startup|repo|study|deal|assignment)|partner (?:api|apis|program|programme|portal|team|"
    r"teams|company|companies|integration|network|account|accounts)|"
    r"bank holidays?|budget (?:airline|airlines|hotel|hotels|option|options|phone|laptop|pick|build)|"
    r"(?:we|they|the team|everyone) (?:took a |had a |held a )?vot(?:e|ed) (?:to|on)|"
    r"(?:take|took|have|had|hold|held) a vote|up ?vot\w*|down ?vot\w*|"
    r"stroke of (?:luck|genius)|brush ?strokes?|keystrokes?|"
    r"oh my god|omg|thank god|god knows|for god'?s sake|"
    r"church scene|temple run|doctor strange|dr\.? strange|doctor of|son of a gun|leader election|"
    r"election of a (?:new )?leader|(?:the|a) union of|union (?:type|types|find|all|query|select)|rent-a-\w+|"
    r"(?:work|working|job|jobs|career|degree) in finance|finance (?:team|teams|department|dept|"
    r"job|role|sector|industry|ministry|minister)|nurse practitioner program|"
    # mental health and counselling as a cause or a field of work, therapy as a figure of speech,
    # a painter's stroke, children in general (books for kids, kids who need a home)
    r"(?:race|run|walk|fundraiser|charity|awareness|campaign|advocacy) for mental health|"
    r"raising awareness (?:for|of|about) mental health|mental health (?:awareness|charity|charities|jobs?|"
    r"careers?|field|sector|advocacy|campaign|month|week|day)|(?:work|working|job|jobs|career|careers) in mental health|"
    r"counsell?ing (?:(?:and|or) mental health )?(?:jobs?|careers?|degree|courses?|program|programme)|"
    r"(?:keen on|interested in|career in|pursue|pursuing|study|studying|degree in|jobs? in|work in|working in) "
    r"counsell?ing|(?:be|become|becoming|train as|training as|work as|working as|job as|career as) (?:a |an )?"
    r"(?:great |good |amazing |school )?counsell?or|(?:like|as good as|better than) therapy|"
    r"(?:fun|so|really|very|quite|super|pretty|and|is|was|it'?s|feels|felt) therapeutic|(?:each|every) (?:brush ?)?stroke|"
    r"kids'? (?:books?|menus?|meals?|shows?|movies?|songs?)|(?:kids|children) who need (?:it|one|a home|homes|a family|"
    r"families|a loving home)"
    r")(?![\w-])"
)

# --- lexicons ------------------------------------------------------------------------------------
# Each entry is a regular expression over the lower-cased text, matched as a whole word.

_DIGITS = r"\d[\d\s#*-]{2,}"  # a code as people type it: "4471", "12-34-56", "1984#"
_SECRET_THINGS = (
    r"door|front door|back door|gate|locker|alarm|safe|garage|building|entry|entrance|access|lock|"
    r"padlock|bike lock|keypad|storage|storage unit|unit|mailbox|letterbox|lockbox|key ?box|wifi|"
    r"wi-fi|security|verification|confirmation|2fa|mfa|otp|one[- ]time|backup|recovery|unlock|"
    r"phone|sim|voicemail|atm|card|bank|vault|office|apartment|flat|house|home|server|router"
)
_BODY = (
    r"back|lower back|knees?|head|neck|shoulders?|stomach|tummy|belly|chest|tooth|teeth|hips?|"
    r"ankles?|wrists?|legs?|arms?|foot|feet|eyes?|ears?|throat|jaw|elbows?|fingers?|toes?|ribs?|"
    r"spine|heart|lungs?|skin|joints?|muscles?|hamstring|achilles|bladder|kidneys?|liver|bowels?|gut"
)
_FAMILY = (
    r"mum|mom|mommy|mummy|mother|dad|daddy|father|parents?|brother|sister|siblings?|bro|sis|"
    r"aunt|auntie|uncle|cousin|grandma|grandpa|granny|grandad|granddad|grandmother|grandfather|"
    r"nan|nana|nonna|oma|opa|abuela|abuelo|in-laws?|mother-in-law|father-in-law|stepmom|stepmum|"
    r"stepdad|best friend|bff|friend|friends|roommate|flatmate|neighbou?r|colleague|coworker|boss|"
    r"wife|husband|partner|girlfriend|boyfriend|fianc[ée]e?|family"
)

_LEXICON: dict[str, str] = {
    "credentials": (
        r"passwords?|passwd|pwd|pw|pass ?codes?|pass ?phrases?|pass ?words?|pins?(?= (?:is|was|number|code|for|:)\b)|"
        r"(?:my|the|your|our|his|her|new|old|card|bank|sim|phone|atm|debit|credit) pin(?: number| code)?|pin codes?|"
        r"pin numbers?|pin ?codes?|pincodes?|pin:? ?\d{3,}|"
        rf"(?:{_SECRET_THINGS}) (?:codes?|combos?|combinations?|pins?|keys? ?codes?|passwords?|pw)|"
        r"combos? (?:for|to|on|of|is)|combination (?:for|to|on|of|is)|combinations? lock|keypads?|"
        r"codes? (?:to|for) (?:get in|get into|the|my|our|his|her|their) \w+|(?:buzzer|intercom|entry|lockbox) ?\w*|"
        r"(?:four|4|five|5|six|6|eight|8)[- ]digit (?:code|pin|number|combo|combination)|"
        rf"(?:alarm|gate|locker|safe|keypad|padlock|door|garage|lockbox|storage unit|bike lock|lock)(?:'s| is| was|:| =)?"
        rf" ?(?:code )?{_DIGITS}(?! ?(?:m|km|metres|meters|miles|ft|feet|minutes|mins|yards|euros|dollars|pounds|%)\b)|"
        r"(?:the )?key (?:is|:|=) ?\S*\d\S*|lock ?screen (?:code|pattern|pin|password|is)|unlock pattern|"
        r"key ?cards?|key ?fobs?|access cards?|secret (?:word|answer|question|phrase|code)|safe ?word|code ?word|"
        r"pin(?:'s| is| was| number| code| for|:)|key ?safe|"
        rf"(?:opens|unlocks) with (?:the )?(?:code )?{_DIGITS}|"
        rf"(?<![\w.:/-])\d{{4,8}}#? (?:for|opens|unlocks|gets you into|on) (?:the |my |our |her |his )?(?:\w+ )?(?:{_SECRET_THINGS})|"
        r"(?:wi-?fi|ssid|network|hotspot|router)(?: name| password| pw| pass)? ?(?:is|:|=) ?\S*\d\S*|"
        r"(?:wi-?fi|ssid|network|hotspot|logins?|user|username)(?: name| details| info)? ?(?:is|:|=) ?[a-z][\w.@-]* ?/ ?\S*[\d!@#$%^&*]\S*|"
        r"(?<![\w/.-])[a-z][a-z\d]{2,}[!#$%^&*][a-z\d!#$%^&*]*\d(?![\w/.-])|"
        r"spare keys?(?: is| are)? (?:under|in|behind|above|inside|with)|key (?:is )?under the (?:mat|pot|plant|rock)|"
        rf"(?:combos?|combinations?|pins?|passwords?|pw|passcodes?)\b[^.!?\n]{{0,25}}?(?<!\w){_DIGITS}|"
        rf"(?<!zip )(?<!area )(?<!postal )(?<!post )(?<!country )codes?(?: is| was| are|:| =|'s)?"
        rf"(?: (?:now|still|just|star|hash))? ?{_DIGITS}|"
        r"logins?(?= (?:is|are|was|details|info|for|:|\w+ ?/))|(?:my|the|new|our|his|her) (?:\w+ )?login|"
        r"log-?in details|sign[- ]?in details|user ?names? and passwords?|credentials|"
        r"api[ _-]?keys?|access tokens?|auth tokens?|bearer tokens?|secret keys?|private keys?|ssh keys?|"
        r"2fa|mfa|otp|one[- ]time (?:code|password)|verification codes?|backup codes?|recovery (?:codes?|"
        r"phrases?|keys?)|seed phrases?|mnemonic|security (?:questions?|answers?)|maiden name|"
        r"mot de passe|mdp|contrase[ñn]as?|passwort|kennwort|geheimzahl|senha|clave|codice pin|"
        r"\[redacted:(?!credit_card|iban|ssn)\w+\]"
    ),
    "government_ids": (
        r"passports?|ssn|social security|my social(?! (?:media|life|skills|worker|circle|anxiety|battery|"
        r"life))|national insurance|ni number|nino|national id|id cards?|id numbers?|identity (?:card|number)|"
        r"(?:my|her|his|their) id\b|driv(?:er'?s?|ing) licen[cs]es?|licen[cs]e (?:no\.?|number|#)|"
        r"tax (?:id|number|no\.?|code)|tin number|steuer-?id|steuernummer|personalausweis|reisepass|"
        r"dni|nie number|nif|aadhaar|pan card|sin number|bsn|nhs number|medicare number|"
        r"sin (?:is |number |#|no\.? )?\d+|voter id|birth certificate|tax file number|tfn|personnummer|codice fiscale|cpf|curp|"
        r"sozialversicherungsnummer|num[ée]ro de s[ée]curit[ée] sociale|dl number|"
        r"residence permit|residency permit|green card|work permit|(?:work|student|tourist|my|her|his) visa|"
        r"visa (?:number|application|status|interview)|citizenship|naturali[sz]ation|"
        r"\d{3}[ -]\d{2}[ -]\d{4}|\[redacted:ssn\]"
    ),
    "health": (
        r"physio\w*|physical therap\w*|therap(?:y|ies|ist|ists|eutic)|counsell?(?:ing|or|ors)|"
        r"psycholog(?:ist|ists)|psychiatr\w*|my shrink|doctors?|docs? (?:said|says|told|appointment)|"
        r"(?:my|the|our|a|her|his) gp|gp (?:appointment|said|says|surgery)|dentists?|dental|orthodontist|"
        r"nurse (?:said|says|told|took|gave)|nhs|clinic|hospitals?|hospice|palliative|chiropract\w*|osteopath\w*|"
        r"acupunctur\w*|pt (?:session|sessions|appointment)|(?:to|in|at) the er|check-?ups?|mammogram|colonoscopy|"
        r"smear test|pap smear|wisdom teeth|root canal|ligaments?|tendon\w*|sciatica|hernia|scoliosis|acl|"
        r"stomach bug|food poisoning|tested positive|test came back|pregnancy test|long covid|"
        r"(?:blood|test|lab|scan|biopsy|mri|smear|screening) results|results came back|"
        r"(?:i'?m|i am|he'?s|she'?s|being|as a) type (?:1|2|one|two)(?![\w-])|type (?:1|2|one|two) diabet\w*|"
        r"(?:lose|losing|lost) (?:some )?weight|lost \d+ ?(?:kg|kilos|lbs|pounds)|ozempic|wegovy|bmi|"
        r"pms|endometriosis|pcos|nervous breakdown|mental breakdown|breakdown|stress leave|in recovery|"
        r"aa meetings?|smok(?:e|es|ed|ing|er)|cigarettes?|vap(?:e|es|ed|ing)|nicotine|quit drinking|"
        r"trying for a baby|lithium|copper coil|(?:the |a |contraceptive )?coil|(?:the |contraceptive )implant|the pill(?!-)|"
        r"morning[- ]after pill|birth control|contracepti\w*|dry (?:january|jan)|sober (?:october|curious)|"
        r"(?:quit|quitting|stop|stopped|stopping|give up|gave up|giving up|cut(?:ting)? (?:down|back) on|off the) "
        r"(?:the )?(?:booze|drink|drinking|alcohol|sugar|caffeine|weed)|"
        r"supplements?|magnesium|zinc tablets|iron tablets|probiotics?|fish oil|omega-?3|vitamins?|"
        r"(?:help|helps|helped) (?:\w+ )?(?:sleep|fall asleep|stay asleep)|sleep (?:aid|aids|better)|"
        r"trimester|due date|morning sickness|expecting (?:our|my|a|her|their|his) (?:first|second|third|baby|child|"
        r"little|twins|\w+ (?:child|baby))|(?:we'?re|i'?m|she'?s|is) expecting(?=[!.?,)]|$| (?:again|twins|in \w+|our|a baby|a little|a boy|a girl|"
        r"number|\d))|baby bump|"
        r"pt (?:today|tomorrow|for|at|again|on)|my psych|the psych|psych (?:appointment|"
        r"session|ward|eval)|feel(?:ing)? (?:so |really |very |pretty |super )?(?:low|down|hopeless|empty|numb|"
        r"worthless)|can'?t get out of bed|not coping|struggling mentally|hay ?fever|sugar levels?|glucose|a1c|"
        r"hba1c|c-section|caesarean|cesarean|postpartum|post-?natal|breastfeed\w*|dr\.? (?:says|said|told|"
        r"appointment|visit)|(?:my|the) dr|eyesight|drinking (?:again|problem|too much)|drinks too much|"
        r"binge\w*|alcohol|hangover|hungover|utis?|yeast infection|remission|deaf|hard of hearing|tinnitus|blind in|"
        r"on the spectrum|neurodivergent|neurodiverse|(?:hip|knee|joint) replacement|transplant|"
        r"(?:cardio|dermato|neuro|onco|gastroentero|endocrino|gyn(?:a)?eco|uro|rheumato|ophthalmo|audio|haemato|"
        r"hemato|nephro|pulmono|immuno|allergo)log(?:ist|ists|y)|podiatr\w*|optometr\w*|ob-?gyn|"
        r"(?:saw|see|seeing|referred to|waiting for) (?:a|the) specialist|"
        r"(?:pulled|strained|tore|torn) (?:a|my) (?:muscle|ligament|hamstring|calf|tendon)|pulled a muscle|"
        r"(?:on|taking|take|took|prescribed|started|starting|switched to|switched from|stopped|off|dose of|mg of) "
        r"(?:the |my |some )?\w{2,}(?:olol|pril|sartan|statin|azole|mycin|cillin|prazole|zepam|olam|sone|olone|"
        r"tidine|oxetine|triptan|mab|profen|xaban|afil|gliptin|formin|thiazide|semide|dronate|parin|oxacin|"
        r"cycline|navir|tadine|fenac|pine|amine|ipram|azine|apine|idone|odone|zolam)|hospitali[sz]ed|a&e|emergency room|urgent care|icu|ambulance|"
        r"surgery|surgeries|operated on|op(?:eration)? on my|appointment with (?:the|my) \w+ist|"
        r"diagnos\w*|symptoms?|prognosis|"
        r"pains?|painful|aches?|aching|headaches?|migraines?|fever|feverish|temperature of|cough\w*|"
        r"sore|nause\w*|threw up|throwing up|vomit\w*|puk(?:e|ed|ing)|dizz\w*|faint(?:ed|ing)|rash|bleeding|"
        r"swollen|swelling|inflamm\w*|infection|infected|flu|covid|corona|(?:caught|have|got|had|with) a cold|"
        r"chickenpox|"
        r"measles|mumps|strep|tonsillitis|bronchitis|pneumonia|eczema|psoriasis|acne|lice|shingles|chickenpox|"
        r"fell (?:off|down|over)\b(?![^.!?]*laugh)|had a (?:bad )?(?:fall|crash|accident)|"
        r"(?:i'?m|i am|been|got|getting|feel|feeling|felt|was|off|calling in|called in|home) (?:so |really |very |"
        r"quite |pretty )?(?:sick|ill|unwell|poorly)|sick (?:day|leave|note)|illness|illnesses|"
        r"(?:son|daughter|kid|baby|mum|mom|dad|wife|husband|partner|he|she|they)(?:'s| is| was| are| has been| got)"
        r"(?: \w+)? (?:sick|ill|unwell|poorly)|"
        r"allerg\w*|intoleran\w*|asthma\w*|inhaler|epipen|diabet\w*|blood (?:sugar|pressure|tests?|work|"
        r"count)|bloodwork|cholesterol|iron (?:is |levels? )?(?:low|high)|low iron|vitamin d|thyroid|"
        r"adhd|autis\w*|asperger\w*|anxiety|anxious|depress\w*|burn(?:ed|t)? ?out|ptsd|ocd|"
        r"bipolar|schizo\w*|epilep\w*|seizures?|cancer|tumou?rs?|chemo\w*|radiotherapy|biopsy|"
        r"mri|ct scan|x-?rays?|ultrasound|scan results|stroke|heart attack|dementia|alzheimer\w*|"
        r"parkinson\w*|multiple sclerosis|arthritis|celiac|coeliac|crohn'?s|ibs|hiv|stds?(?!:)|stis?|herpes|"
        r"pregnan\w*|weeks pregnant|expecting a baby|miscarr\w*|ivf|fertility|infertil\w*|"
        r"periods?(?= (?:pain|cramps|is|are|came|started|late))|my period|cramps|menopaus\w*|"
        r"insomnia|can'?t sleep|trouble sleeping|sleeping pills|sleep apnea|nightmares|"
        r"panic attacks?|mental health|suicid\w*|self[- ]harm\w*|eating disorder|anorexi\w*|bulimi\w*|"
        r"rehab|sober|sobriety|relapse\w*|addict\w*|alcoholi\w*|"
        r"injur\w*|sprain\w*|fractur\w*|broken (?:arm|leg|wrist|ankle|foot|hand|finger|toe|nose|ribs?)|"
        r"slipped disc|herniated|concussion|stitches|crutches|cast on|wheelchair|disabilit\w*|disabled|"
        r"hearing aids?|"
        r"medications?|medicines?|meds|pills|prescri\w*|dose|doses|dosage|\d+ ?mg|"
        r"jabs?|vaccin\w*|booster|flu shot|covid shot|antibiotics?|antihistamines?|painkillers?|"
        r"antidepressants?|sertraline|ibuprofen|naproxen|paracetamol|acetaminophen|tylenol|advil|"
        r"aspirin|metformin|insulin|statins?|amoxicillin|prozac|zoloft|lexapro|citalopram|"
        r"escitalopram|fluoxetine|venlafaxine|bupropion|wellbutrin|adderall|ritalin|methylphenidate|"
        r"vyvanse|xanax|valium|diazepam|lorazepam|melatonin|levothyroxine|hrt|"
        # a body part as the reason for care: "for my knee", "asked the physio about my hip"
        rf"(?:for|about) (?:my|your|his|her|their) (?:{_BODY})\b|(?:{_BODY}) (?:issues|problems|injury|injuries|trouble|surgery|pain|op)|"
        rf"(?:broke|broken|sprained|twisted|pulled|injured|hurt|dislocated|tore|torn) (?:my|his|her|their) (?:{_BODY})|"
        rf"(?:(?:my|his|her|their) )?(?:{_BODY})(?:'s| is| has| keeps| was)?(?: been| still| really| so)?"
        r" (?:killing|hurting|hurts|hurt|aching|aches|sore|throbbing|swollen|bleeding|numb|playing up|acting up|stiff|"
        r"tight|locked|clicking|giving out|giving me grief)|maternity leave|"
        r"fisio\w*|physiotherapie|krankengymnastik|kin[ée]|kinésithérap\w*|kinesitherap\w*|ergotherap\w*|chiro|"
        r"(?:my )?back went out|threw (?:my back out|out my back)|krankenhaus|arzt|ärztin|médico|medico|médecin|enfermo|krank"
    ),
    "sexual_life": (
        r"gay|lesbian|bisexual|queer|lgbt\w*|homosexual|heterosexual|straight (?:guy|man|woman|girl)|"
        r"asexual|ace spectrum|pansexual|demisexual|"
        r"(?:i'?m|i am|am|she'?s|he'?s|they'?re|is|as|being) (?:also )?(?:bi|pan|trans|enby)(?![\w-])|"
        r"transgender|trans (?:man|woman|guy|girl|kid|person)|non-?binary|enby|genderqueer|"
        r"gender (?:identity|dysphoria|transition)|"
        r"(?:came|come|coming) out (?:to|as)|came out (?:last|this|in \d+|at \d+|when)|(?:my|her|his) coming out|"
        r"in the closet|closeted|"
        r"sex|sexual\w*|sexually|intimate|intimacy|hook(?:ed|ing)? up|hookups?|one[- ]night stands?|"
        r"(?:slept|sleep|sleeping) with (?:him|her|them|someone|my ex|a guy|a girl|a man|a woman|a stranger)|kink\w*|fetish\w*|libido|erectile|"
        r"contracepti\w*|condoms?|birth control|the pill(?!-)|morning[- ]after pill|iud|"
        r"trying for a baby|trying to conceive|ttc|grindr|onlyfans|nudes|sexting|threesome|"
        r"my sexuality|orientation|friends with benefits|fwb|sleeping together|celiba\w*|virgin|porn\w*|"
        r"polyamor\w*|open relationship|(?:i'?m|we'?re|i am|we are) poly|"
        r"(?:i'?m|i am) (?:only |mostly |also )?into (?:guys|girls|men|women|both|dudes)|"
        r"stds?(?!:)|stis?|herpes|hiv"
    ),
    "minors": (
        r"kids?|kiddos?|child|children|childcare|sons?|daughters?|stepsons?|stepdaughters?|stepkids?|"
        r"(?:mum|mom|mother|dad|father|parent)s? of (?:one|two|three|four|five|six|\d)\b|"
        r"stepchildren|toddlers?|(?<!expecting a )(?<!trying for a )(?<!have a )(?<!having a )bab(?:y|ies)|"
        r"my (?:little )?(?:boy|girl)(?!friend)|my little (?:one|guy|man|lady)|custody|p(?:a)?ediatrician|"
        r"from school|after school|school pick ?up|drop(?:ping)? (?:\w+ )?off at school|parent[- ]teacher|"
        r"\d+(?:st|nd|rd|th) grade|grade \d+|year \d+ at school|grounded me|my parents (?:won'?t|don'?t) let me|"
        r"(?:my|our) (?:oldest|youngest|eldest|middle (?:one|child|kid))|parents are (?:out|away)|(?:i'?m|i am) 1[0-7](?= ?(?:years|yrs|yo|y/o|,|\.|!|and\b|$))|baby shower|"
        r"homeschool\w*|home[- ]school\w*|(?:teach|teaches|teaching|taught) (?:year|grade|reception|\d|primary|"
        r"kindergarten|nursery|preschool|kids|children|teens|year \d+)|(?:year|grade) \d+ (?:class|pupils|students|kids)|"
        r"pupils|(?:the )?baby (?:comes|arrives|is born|is due|is here)|(?:our|my) first (?:child|baby)|"
        r"expecting (?:our|my|a|her|their|his) (?:first|second|third|baby|child|little|twins)|pregnan\w*|"
        r"miscarr\w*|trimester|due date|"
        r"kinder|ni[ñn]os|enfants|bambin[io]|figli[oa]?|crian[çc]as|newborn|infant|teens?|teenagers?|tween|twins|triplets|little ones?|"
        r"nephews?|nieces?|grand(?:son|daughter|kid|child|children)s?|godson|goddaughter|godchild|"
        r"kindergarten|preschool|pre-k|elementary school|primary school|middle school|nursery|"
        r"daycare|day care|kita|crèche|creche|babysitter|nanny|school run|playdate|play date|"
        r"homework|diapers?|nappies|nappy|stroller|pram|teething|potty|bedtime stor\w*|"
        r"\w+'s (?:school|teacher|class|kindergarten|nursery|primary)|"
        r"\d{1,2} ?(?:yo|y/o|yrs? old|years? old|year-old|month-old|months old)|"
        r"(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|"
        r"seventeen)[- ](?:year|month|week)[- ]olds?|(?:starts?|starting|started|in|into|finish(?:es|ed|ing)?) "
        r"(?:year|grade) \d{1,2}(?![\w.])|"
        r"\d{1,2}-year-olds?|turns? (?:1[0-7]|[1-9]|one|two|three|four|five|six|seven|eight|nine|ten)\b|"
        r"(?:she|he)(?:'s| is) (?:1[0-7]|[1-9]) (?:and|now|already|next)|"
        r"mein sohn|meine tochter|mi hij[oa]|mis hijos|mon fils|ma fille"
    ),
    "finances": (
        r"salar(?:y|ies)|income|wages?|paycheck|pay ?check|payslip|payday|pay ?day|paid \$?\d+|"
        r"(?:got|get|getting|asked for|ask for|a) (?:a )?(?:pay )?(?:raise|rise)|pay (?:raise|rise|cut)|bonus|"
        r"earn(?:s|ed|ing)? (?:about |around |like |over |under |only )?[$€£]?\d[\d,.]*k?|hourly rate|"
        r"lost (?:my|his|her|their) job|laid off|got fired|unemploy\w*|redundan\w*|on benefits|universal credit|"
        r"food stamps|welfare|maxed out|in the red|paycheck to paycheck|gambl\w*|(?:checking|current|savings) accounts?|"
        r"account balance|joint account|(?:transferred|sent|wired|lent|borrowed|spent|paid|pay|owe|cost|costs) (?:him |her |them |"
        r"me |my \w+ |about |around |like |over )?[$€£]?\d[\d,.]*k?(?! ?(?:hours?|hrs?|minutes?|mins?|days?|weeks?|"
        r"months?|years?|times?|%|seconds?|secs?|h|m|s|am|pm|pages?|lines?|messages?|emails?|files?|points?))|"
        r"debts?|in debt|owe|owes|owed|owing|loans?|mortgage\w*|credit (?:score|rating|card|cards|limit)|"
        r"debit card|(?<!id )card number|cvv|sort code|account number|routing number|iban|"
        r"bank (?:account|balance|statement|transfer|loan|details|app)|my bank|savings|saved up|"
        r"invest\w*|index funds?|etf|stocks?|shares in|portfolio|crypto\w*|bitcoin|btc|401k|roth ira|isa|"
        r"pension|retirement fund|bankrupt\w*|insolven\w*|tax(?:es)?(?! (?:id|number|no|code|file))|tax return|rent|overdraft|overdrawn|"
        r"broke(?! (?:my|his|her|their|up|the|it|down|into|in|out|a|an|our|your|through|off|free|even|me|us|him|them|"
        r"everything|prod|production|the build|things))|"
        r"budget\w*|can'?t afford|afford|bills|(?:car|loan|mortgage|rent|late|missed|monthly|minimum) payments?|paid off|pay off|inheritance|net worth|"
        r"financ\w*|money|cash|\d+ grand|a grand|quid|bucks|dollars|euros|\d+(?:[.,]\d+)? ?(?:usd|eur|gbp|chf)|"
        r"[$€£¥]\s?\d[\d,.]*k?|\d[\d,.]*\s?[$€£]|"
        r"(?<!\ba )\d+(?:[.,]\d+)?k(?! (?:run|race|steps|resolution|monitor|monitors|tv|video|display|screen|stars|"
        r"followers|views|subs|subscribers|lines|words|tokens|context|rows|users|requests))|"
        r"\d{3,}(?:[.,]\d+)? ?(?:a|per|/) ?(?:month|year|week|hour|yr|mo|hr)|\d+ ?% (?:more|less|raise|cut)|"
        r"\[redacted:(?:credit_card|iban)\]|"
        r"tith(?:e|es|ing)|zakat|(?:donate|donates|give|gives|giving) \d+ ?%|\d+ ?% (?:of (?:my|our) (?:income|salary|pay|wage)|to (?:my |the )?(?:church|mosque|charity))|"
        r"gehalt|schulden|sueldo|salaire|deudas?|dettes?"
    ),
    "religion": (
        r"muslims?|islam\w*|christian\w*|catholic\w*|protestant\w*|evangelical\w*|orthodox (?:jew|christian|"
        r"church)|jewish|jews?|judaism|hindu\w*|buddhis\w*|sikh\w*|mormon\w*|lds|jehovah'?s?|atheis\w*|"
        r"agnostic\w*|pagan\w*|wicca\w*|religio\w*|spiritual\w*|my faith|(?:of|our|their|her|his) faith|"
        r"believe in god|god'?s plan|"
        r"(?:to|at|my|our|from|after|before|in) church|church (?:on|every|service|services|group|choir|camp|"
        r"youth|family|community|retreat)|churchgoer|mosque|synagogue|shul|(?:to|at|my|our) (?:the )?temple|"
        r"gurdwara|pray\w*|prayers?|bible|quran|koran|torah|scripture\w*|ramadan|eid|iftar|suhoor|sehri|"
        r"(?:for|during|in|of) lent|lent (?:starts|is|begins)|passover|yom kippur|rosh hashanah|hanukk?ah|chanukah|diwali|shabbat|sabbath|kosher|halal|"
        r"(?:to|at|sunday|go to|went to|attend) mass|mass (?:on|every)|rosary|pastor|priest|"
        r"imam|rabbi|monk|nuns?|baptis\w*|baptiz\w*|christening|communion|bar mitzvah|bat mitzvah|"
        r"hijab|niqab|burqa|turban|yarmulke|kippah|fasting|"
        r"jesus|allah|hajj|umrah|pilgrimage|sermon|worship\w*|sunday school|born again|quaker|amish|shinto|"
        r"tao(?:ism|ist)|zoroastrian|bah[aá]'?[ií]|scientolog\w*|rastafari\w*|deacon|vicar|reverend|believer|"
        r"gläubig|iglesia|église|eglise|kirche|moschee"
    ),
    "politics": (
        r"(?:i|i've|i have|i'll|i will|i'm|i am|i was|gonna|going to|never|always|didn'?t|don'?t|won'?t|"
        r"will|to|and|also|first time) vot(?:e|ed|ing)|voter|voters|voting (?:for|against|green|left|"
        r"right)|vot(?:e|ed|ing) (?:for|against) (?:the )?(?:[a-z]+ )?(?:party|candidate|president|mayor|"
        r"senator|greens?|labou?r|tor(?:y|ies)|conservatives?|liberals?|democrats?|republicans?|left|"
        r"right)|elections?|electoral|ballot|polling station|referendum|postal vote|caucus|"
        r"democrats?|democratic party|republicans?|gop|labou?r party|labou?r voter|voted labou?r|tory|"
        r"tories|conservatives|conservative (?:party|voter|voters|government|mp|candidate)|liberals|"
        r"liberal (?:party|voter|voters|democrats?|government|mp|candidate)|lib ?dems?|socialis\w*|communis\w*|marxis\w*|anarchis\w*|"
        r"libertarian\w*|progressives|left[- ]wing|right[- ]wing|far[- ](?:left|right)|leftists?|"
        r"left[- ]leaning|right[- ]leaning|centrist|greens|green party|voted green|snp|ukip|reform uk|"
        r"afd|spd|cdu|csu|fdp|die linke|grüne|political\w*|politically|politics|politician\w*|"
        r"(?:the|this|our|current|new|their) (?:government|govt|administration|regime)|"
        r"union members?|member of (?:the|a|my) union|trade unions?|(?:the|my|our) union|unioni[sz]\w*|"
        r"on strike|going on strike|picket\w*|protest\w*|march(?:ed|ing)|rall(?:y|ies)|demonstration\w*|"
        r"petition\w*|activis\w*|activists?|campaign(?:ing|ed)? for|canvass\w*|party members?|"
        r"member of the \w+ party|joined the \w+ party|maga|trump|biden|obama|brexit|"
        r"parliament|senators?|congress\w*|prime minister|the president|mayor|feminis\w*|pro-life|pro-choice|"
        r"abortion|gun control|second amendment|extinction rebellion|blm|black lives matter|woke|anti-?vax\w*|"
        r"(?:i'?m|i am|as|being) an? (?:\w+ )?(?:conservative|liberal|progressive|socialist|democrat|republican|tory|"
        r"leftist|centrist|libertarian|anarchist|communist|green)(?! \w)|union (?:rep|steward|member|meeting|dues)|"
        r"independence (?:movement|referendum)|separatis\w*|nationalis\w*|(?:the|a) march (?:against|for)|"
        r"march(?:ed|ing) (?:against|for)|(?:climate|pride|peace|protest|solidarity|anti-\w+|women'?s) march(?:es)?|"
        r"(?:on|to|at|joined) (?:the|a) (?:\w+ )?march(?! (?:\d|madness|issue|release|sprint|deadline))|union rep|(?:my|our|local) mp|councillor|went on strike"
    ),
    "precise_location": (
        r"home address|my address|(?:our|her|his|their) address|address is|i live at|we live at|"
        r"lives? at \d+|(?:apartment|apt|flat|unit|suite|room|house|door) (?:no\.? |number |#)?(?:is |: ?)?\d+\w?|"
        r"zip (?:code )?is|my zip|postcode is|my postcode|post code is|gps|coordinates|latitude|longitude|"
        r"\d{1,3}\.\d{4,},\s*-?\d{1,3}\.\d{4,}|"
        r"(?:on|at|off|in) (?!the |a |my |this |that )(?:[\w'-]+ ){1,2}(?:street|road|rd|lane|avenue|ave|"
        r"boulevard|blvd|crescent|terrace)|\d+(?:st|nd|rd|th) (?:and|&) \w+|"
        r"(?:rue|calle|avenida|rua) (?:de |des |del |du |la |le |da |do )?[\w'-]+|"
        r"\w+(?:straße|strasse|str\.|weg|platz|gasse|laan|straat|gade|vej) ?\d+|"
        # where the speaker is right now, named by the kind of place: "I'm at the pool, back in an hour"
        r"(?:i'?m|i am|we'?re|we are) (?:currently |still |now |just )?at the (?:gym|office|hospital|airport|station|pub|"
        r"park|library|supermarket|shops|beach|pool|doctor'?s|dentist'?s|vet'?s|hotel)\b|"
        r"home alone|(?:i'?m|i am|we'?re|we are) (?:currently |still |now )?(?:at|in) "
        r"(?!(?:the |a |an )?(?:meeting|call|hurry|rush|bad|good|queue|zoom|standup|sprint|review|class|lecture)\b)(?:the |a )?[\w'-]+"
        r"(?: [\w'-]+)?(?: on| near| next to| across from| opposite| by| right now| rn| till| until)|"
        r"(?:i|we) live (?:right )?(?:next to|next door to|across from|opposite|above|below|behind|around the corner"
        r" from|in (?:flat|apartment|apt|unit|number))|\d+(?:st|nd|rd|th) floor|(?:my|our) street|house number|"
        r"door number|(?:my|our) (?:hotel|airbnb|room) is|staying at the \w+|(?:i'?ll|i will|we'?ll|we will) be at "
        r"(?:the )?[\w'-]+(?: [\w'-]+)? (?:at|from|until|till|between) \d+|(?:our|my) (?:place|house|flat|apartment|home) is "
        r"(?:the|on|at|next|above|right|across|opposite|behind|near)|"
        r"where i live|my location|my whereabouts|hotel room|room number"
    ),
    "relationships": (
        r"wife|wifey|husband|hubby|spouse|partner|partners(?= (?:and|&) i)|life partners?|girlfriend|"
        r"boyfriend|gf|bf|bae|fianc[ée]e?|fiance|other half|significant other|my so|the missus|missus|"
        r"missis|the mrs|my man|my lady|(?:my|an|the|her|his) ex|exes|ex-(?:wife|husband|girlfriend|boyfriend|partner)|"
        r"married|marriage|marry|wedding|(?:got|are|is|we'?re|i'?m|just|recently|newly) engaged|engaged to|"
        r"engagement|proposed to (?:me|her|him)|propos(?:e|ing|al) to (?:her|him|them|my \w+)|pop(?:ping)? the question|"
        r"engagement ring|(?:buy|buying|bought|pick|picking|picked) (?:out )?(?:a |the )?ring for|"
        r"(?:she|he) proposed|divorc\w*|separat(?:ed|ing|ion)|"
        r"split up|splitting up|broke up|break ?up|breaking up|dumped|cheat(?:ed|ing|s)? on|cheating|"
        r"affair|dating|date with|first date|date night|on a date|going out with|"
        r"seeing someone|started seeing|been seeing|crush on|a crush|my crush|in love|fell for|anniversary|"
        r"hinge|tinder|bumble|okcupid|match\.com|"
        r"novi[oa]|marido|espos[ao]|freundin|mein freund|mein mann|meine frau|ma femme|mon mari|"
        r"mon copain|ma copine|ragazz[ao]|namorad[ao]|"
        r"i'?m single|newly single|single again|widow\w*|situationship|talking stage|ghost(?:ed|ing)|"
        r"long[- ]distance|moved in together|living together|honeymoon|together (?:for )?\d+ (?:years|months)|"
        r"(?:and i|and me|me and \w+) are (?:together|dating|a thing|an item|official|exclusive|back together|"
        r"on a break)|(?:we|we'?ve|we'?re|and i|me and \w+) (?:just |finally |officially )?(?:split|splitting)"
        r"(?! (?:the|it|a|an|this|that|into|up the|them|our|my|costs|bills))|made it official|met someone|"
        r"she said yes|he said yes|(?:been on|went on|go on|going on|had) (?:a few |some |two |three |\w+ )?dates|"
        r"sweetheart|new (?:man|woman|guy|girl|lady|fella|bloke|partner|flame|squeeze|love|bf|gf)|"
        r"my (?:fella|bloke|guy|lad|girl|man|woman)(?!friend)|been together|together since|got together|"
        r"(?:i'?m|i am|i've been|been|started|we're|we are) seeing (?:someone|somebody|\w+ (?:now|for|since|again|"
        r"lately|recently|officially|exclusively))|someone special|seeing each other|talking to (?:this|a) (?:girl|guy|woman|man)|"
        r"met (?:this|a) (?:girl|guy|woman|man)|love of my life|soul ?mate|valentine\w*|kissed|in-laws?|mother-in-law|father-in-law"
    ),
}

# Kinds of phrasing dev7 (issue 18) showed the lists above missed: a home or car bought or sold,
# a remortgage, a parent's will; an injury told with its verb; a relationship "called off"; a
# colleague's pregnancy (another person's private life); a party membership.
_LEXICON["finances"] += (
    r"|remortgag\w*|probate|(?:bought|buying|sold|selling) (?:a |the |our |my |his |her )?(?:(?:first |new |"
    r"second-hand |used |old )?(?:car|house|home|flat|apartment|place|property))|"
    rf"(?:{_FAMILY})'?s will|paid (?:more|less|better|well|badly|peanuts)"
)
_LEXICON["health"] += (
    r"|(?:cracked|broke|broken|fractured|bruised|sprained|twisted|dislocated|tore|torn|pulled) (?:a |my |his |"
    rf"her |the )?(?:{_BODY}|acl|ligaments?|tendons?|discs?)"
)
_LEXICON["relationships"] += (
    rf"|call(?:ed|ing|s)? it (?:quits|off)|(?:{_FAMILY})s? (?:of mine )?(?:is|was|got|'s) pregnant"
)
# Kinds of phrasing dev8 (issue 18) showed missing: a scan or an operation named by the organ, a
# sting, a baby on the way told as "having the baby"; a deposit paid; a first proper date; someone
# else's address.
_LEXICON["health"] += (
    r"|(?:a|the|my|an|another|follow-up) (?:\w+ )?scan|appendi(?:x|citis)|tonsils|gallbladder|stung|"
    r"(?:having|have|had|expecting) (?:the|a|our) baby|baby'?s due|due date"
)
_LEXICON["finances"] += r"|(?:the|a|our|my|house|rent|rental|security) deposit"
_LEXICON["relationships"] += r"|(?:first|second|third|proper|real|actual) (?:proper |real )?dates?"
_LEXICON["precise_location"] += r"|\w+'s (?:new |old |home )?address"
_LEXICON["politics"] += (
    r"|card[- ]carrying|(?:labou?r|tory|conservative|lib ?dem|green|snp|democrat|republican) (?:party )?member\w*"
)

_PATTERNS = {slug: re.compile(rf"(?<![\w-])(?:{words})(?![\w])") for slug, words in _LEXICON.items()}
# Street addresses need their capital letters, or "a 10 minute drive" would be an address.
_STREET = re.compile(
    r"\b\d+[A-Za-z]?,?\s+(?:[A-Z][\w'-]*\s+){1,3}(?:Street|St|Avenue|Ave|Road|Rd|Lane|Ln|Drive|Dr|"
    r"Boulevard|Blvd|Way|Court|Ct|Place|Pl|Terrace|Close|Square|Sq|Crescent|Gardens|Grove|Hill|Row|Mews)\b"
)
# "on Maple Drive": a capitalised street name after a preposition, not a drive of software.
_STREET_NAME = re.compile(
    r"\b(?:on|at|in|off)\s+(?!(?:Google|One|Hard|Flash|Shared|Team|Disk|USB|My|The)\s)(?:[A-Z][\w'-]*\s+){1,2}"
    r"(?:Street|St|Avenue|Ave|Road|Rd|Lane|Ln|Drive|Dr|Boulevard|Blvd|Way|Court|Ct|Place|Terrace|Close|Crescent)\b"
)
# UK postcodes and "75011 Paris": a postal code beside a place name.
_POSTCODE = re.compile(r"\b[A-Z]{1,2}\d[A-Z\d]?\s*\d[A-Z]{2}\b|\b\d{5}\s+[A-Z][a-zé]+\b")
_FAMILY_WORD = re.compile(
    rf"(?<![\w-])(?:(?:my|our|his|her|their) (?:\w+ )?(?:{_FAMILY})|(?:{_FAMILY}) and (?:i|me)|(?:i|me) and (?:my )?(?:{_FAMILY}))(?![\w])"
    # "mum got a diagnosis": a family word that opens the sentence is the speaker's own
    rf"|(?:^|[.!?]\s+)(?:mum|mom|dad|mother|father|nan|gran|granny|grandma|grandpa|grandad)(?=\s)"
    rf"|(?<![\w-])(?:mum|mom|dad|mother|father|nan|gran|granny|grandma|grandpa|grandad)'s(?![\w])"
)
# Where someone will be, read with its capital letters: an airport gate, a flight number, a table
# booked at a named place; and a proposal to someone named.
_CASED = {
    "precise_location": re.compile(
        r"\b(?:[Gg]ate|[Tt]erminal|[Pp]latform|[Ss]eat|[Bb]erth|[Cc]abin|[Cc]oach|[Cc]arriage) [A-Z]?\d{1,3}[A-Z]?\b|"
        r"\b(?:[Ff]light|[Ff]lights|[Ff]lying|[Ff]ly|[Tt]rain|[Ff]erry|[Cc]oach)\b[^.!?\n]{0,20}?\b[A-Z]{2,3}\s?\d{2,4}\b|"
        r"\b(?:a table|reservation|booking|booked|reserved|dinner|lunch|brunch|drinks) (?:\w+ ){0,3}?at (?:the )?[A-Z][\w'&-]+"
    ),
    "relationships": re.compile(
        r"\b(?:[Pp]ropos(?:e|ing|ed)|[Mm]arry|[Mm]arrying|[Ee]ngaged to) (?:to )?[A-Z][a-z]+"
    ),
}
# "We" waiting for a baby: the other parent is part of it.
_JOINT = re.compile(r"(?<![\w-])(?:we|we'?re|we'?ve|we'?ll|us|our)(?![\w-])")
_EXPECTING = re.compile(
    r"(?<![\w-])(?:pregnan\w*|expecting(?= (?:our|a baby|a little|twins|again|in \w+)|[!.?,]|$)|due date|trimester|ivf|trying for a baby|trying to conceive|miscarr\w*|"
    r"(?:the )?baby (?:comes|arrives|is born|is due|is here)|our first (?:child|baby))(?![\w-])"
)
_BANK_CARD = re.compile(
    r"(?<![\w-])(?:(?<!sim )(?<!sd )(?<!key )(?<!access )(?<!memory )(?<!graphics )(?<!gift )card|bank|atm|debit|credit)(?![\w-])"
)
# A quarrel, estrangement, loss or other private event in the family or among friends.
_CONFLICT = re.compile(
    r"(?<![\w-])(?:fight|fights|fought|fighting|argument|arguments|argue|argued|arguing|a row|falling out|"
    r"fell out|not speaking|(?:not |aren'?t |isn'?t |not been |never )on speaking terms|haven'?t spoken|don'?t speak|stopped talking|not talking|estranged|cut off|"
    r"disowned|no contact|(?:don'?t|do not|never|didn'?t) get along|not getting along|toxic|abusive|abuse[sd]?|yell(?:ed|ing|s)? at|hate(?:s)? (?:me|each other)|passed away|died|"
    r"funeral|grie(?:f|ving)|pregnant|getting married|in jail|in prison|arrested)(?![\w])"
)
# Categories that are also someone else's private life when said of a family member or friend.
_ABOUT_SOMEONE = {"health", "sexual_life", "finances"}

# One typo away counts: the words people misspell, by category (six letters or more, so that a
# typo cannot turn a short everyday word into one of them).
_TYPO_WORDS = {
    "credentials": ("password", "passwords", "passcode", "combination", "credentials", "keypad"),
    "government_ids": ("passport", "licence", "license"),
    "health": (
        "physio",
        "physiotherapy",
        "therapy",
        "therapist",
        "doctor",
        "hospital",
        "diagnosed",
        "surgery",
        "medication",
        "prescription",
        "pregnant",
        "anxiety",
        "depression",
        "depressed",
        "allergic",
        "allergy",
        "migraine",
        "insomnia",
        "diabetes",
        "diabetic",
        "cancer",
        "asthma",
        "dentist",
        "counselling",
        "counseling",
        "psychologist",
        "psychiatrist",
        "antidepressants",
        "symptoms",
        "infection",
        "headache",
    ),
    "sexual_life": ("bisexual", "lesbian", "transgender", "contraception"),
    "minors": ("daughter", "daughters", "children", "toddler", "kindergarten", "nursery", "stepdaughter"),
    "finances": ("salary", "mortgage", "savings", "overdraft", "overdrawn", "invested", "paycheck", "budget"),
    "religion": (
        "religion",
        "religious",
        "christian",
        "catholic",
        "muslim",
        "ramadan",
        "church",
        "synagogue",
    ),
    "politics": ("election", "politics", "political", "conservative", "liberal", "protest", "referendum"),
    "precise_location": ("address", "apartment", "postcode"),
    "relationships": (
        "girlfriend",
        "boyfriend",
        "husband",
        "fiancee",
        "divorce",
        "divorced",
        "married",
        "wedding",
        "engaged",
        "partner",
        "cheating",
    ),
}
# Real words one letter away from a keyword above, which must not count as its typo.
_NOT_TYPOS = frozenset(
    "laughter slaughter licensed enraged encaged marred marries carried harried parried tarried welding "
    "wedging weeding bedding wadding wending heating repressed inflection sayings ravings inverted "
    "infested injection budged selection ejection erection literal protect pretest muslin cancel canter lancer "
    "dancer canker adders physic keypads partners".split()
)
_WORD = re.compile(r"[a-zà-ÿ]{6,}")


_NO_APOSTROPHE = re.compile(
    r"\b(im|ive|dont|cant|wont|didnt|isnt|doesnt|havent|hasnt|couldnt|shes|hes|theyre|were(?= (?:seeing|dating|together|engaged|married)))\b"
)
_APOSTROPHE = {"im": "i'm", "ive": "i've", "dont": "don't", "cant": "can't", "wont": "won't", "didnt": "didn't",
               "isnt": "isn't", "doesnt": "doesn't", "havent": "haven't", "hasnt": "hasn't", "couldnt": "couldn't",
               "shes": "she's", "hes": "he's", "theyre": "they're", "were": "we're"}  # fmt: skip


def _normalise(text: str) -> str:
    text = text.replace("\u2019", "'").replace("\u2018", "'").lower()
    text = _NO_APOSTROPHE.sub(lambda m: _APOSTROPHE[m[1]], text)
    return _NEUTRAL.sub(" ", text)


def _one_typo(word: str, target: str) -> bool:
    """True when `word` is one insertion, deletion, substitution or swap of neighbours from `target`."""
    if word == target or abs(len(word) - len(target)) > 1:
        return False
    if len(word) == len(target):
        diff = [i for i, (a, b) in enumerate(zip(word, target, strict=True)) if a != b]
        if len(diff) == 1:
            return True
        return (
            len(diff) == 2
            and diff[1] == diff[0] + 1
            and word[diff[0]] == target[diff[1]]
            and word[diff[1]] == target[diff[0]]
        )
    short, long = (word, target) if len(word) < len(target) else (target, word)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


@lru_cache(maxsize=4096)
def _typo_category(word: str) -> str:
    if word in _NOT_TYPOS:
        return ""
    for slug, targets in _TYPO_WORDS.items():
        if any(_one_typo(word, target) for target in targets):
            return slug
    return ""


def categories(text: str) -> set[str]:
    """Every consent category `text` mentions: a set of slugs, empty when it mentions none."""
    if not text or not text.strip():
        return set()
    lowered = _normalise(text)
    found = {slug for slug, pattern in _PATTERNS.items() if pattern.search(lowered)}
    if _STREET.search(text) or _STREET_NAME.search(text) or _POSTCODE.search(text):
        found.add("precise_location")
    found |= {slug for slug, pattern in _CASED.items() if pattern.search(text)}
    found |= {slug for word in _WORD.findall(lowered) if (slug := _typo_category(word))}
    if (found & _ABOUT_SOMEONE or _CONFLICT.search(lowered)) and _FAMILY_WORD.search(lowered):
        found.add("relationships")
    if _EXPECTING.search(lowered) and _JOINT.search(lowered):
        found.add("relationships")
    if "credentials" in found and _BANK_CARD.search(lowered):
        found.add("finances")
    return found


def classify_category(text: str) -> str:
    """The most sensitive consent category `text` mentions (CATEGORY_PRIORITY order), or ""."""
    found = categories(text)
    return next((slug for slug in CATEGORY_PRIORITY if slug in found), "")


# What a fact's key says about its category, whatever the words in the value.
KEY_CATEGORIES = {
    "allergies": "health",
    "health_conditions": "health",
    "medications": "health",
    "partner": "relationships",
    "children": "minors",
    "religion": "religion",
    "politics": "politics",
    "address": "precise_location",
    "income": "finances",
}


def fact_category(key: str, value: str) -> str:
    """The category of a fact: its key's category, escalated by what the value itself says."""
    by_key = KEY_CATEGORIES.get(key.split(".")[0], "")
    by_value = classify_category(value)
    if key == "diet" and value.lower() in ("halal", "kosher"):
        by_value = "religion"
    candidates = [c for c in (by_key, by_value) if c]
    return min(candidates, key=CATEGORY_PRIORITY.index) if candidates else ""


# --- what an extracted item inherits from where it was said --------------------------------------

_SENTENCE_END = re.compile(r"(?<=[.!?;\n])\s+|\s+(?=[\u2600-\u27bf\U0001f300-\U0001faff])")
_CLAUSE_BREAK = re.compile(
    r",?\s+(?:but|whereas|although|though|except)\s+|,\s+(?:and then|then|so|also|plus|while)\s+|"
    r"\s+[-\u2013\u2014]\s+|,\s+(?=i\b|we\b)|,?\s+and\s+(?=(?:i|i'm|im|i've|my|we)\b)",
    re.IGNORECASE,
)
_CONTENT_WORD = re.compile(r"[a-zà-ÿ0-9]{3,}")
_SCOPES = ("own", "clause", "sentence", "message")


def source_span(item_text: str, source_text: str, scope: str = "clause") -> str:
    """The part of `source_text` an item drawn from it was said in: the clause (or sentence) sharing
    the most words with the item, the whole message when none does or when `scope` is "message"."""
    if scope == "message":
        return source_text
    words = set(_CONTENT_WORD.findall(item_text.lower()))
    spans = [s for s in _SENTENCE_END.split(source_text) if s.strip()]
    if scope == "clause":
        spans = [c for s in spans for c in _CLAUSE_BREAK.split(s) if c.strip()]
    overlap = [(len(words & set(_CONTENT_WORD.findall(s.lower()))), s) for s in spans]
    best = max((n for n, _ in overlap), default=0)
    if not best:
        return source_text
    return " ".join(s for n, s in overlap if n == best)


def item_category(item_text: str, source_text: str, key: str = "", scope: str = "clause") -> str:
    """An extracted fact's or note's category: its own (key and text, see `fact_category`) when its
    own words have one, else the category of the clause of the message it came from — "Mei" drawn
    from "hoping to propose to Mei" is a relationship though the name alone is not. Measured on
    the development splits, filling beats escalating: both ask as often, escalating more often asks
    under a category the item does not reveal. `scope` "own" keeps the item's own category."""
    own = fact_category(key, item_text) if key else classify_category(item_text)
    if own or scope == "own" or not source_text:
        return own
    return classify_category(source_span(item_text, source_text, scope))


def with_source_categories(extraction, source_text: str, scope: str = "clause"):
    """`extraction` (facts with key/value, notes with content) with each item's category filled
    from the clause it was said in when its own words have none (`item_category`); returns the
    same object, changed in place."""
    for fact in extraction.facts:
        fact.category = item_category(fact.value, source_text, fact.key, scope)
    for note in extraction.notes:
        note.category = item_category(note.content, source_text, "", scope)
    return extraction
