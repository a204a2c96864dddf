"""Word lists the heuristic extractor checks its captures against.

A capture only becomes a fact when it is a known thing of the right kind: "I use Docker"
gives a tool because Docker is in TOOLS, "I use my phone" gives nothing. Lower-case keys,
canonical spellings as values.
"""

from __future__ import annotations


def _canon(*names: str) -> dict[str, str]:
    return {name.lower(): name for name in names}


SPOKEN_LANGUAGES = _canon(
    "English", "Spanish", "French", "German", "Italian", "Portuguese", "Dutch", "Swedish", "Norwegian",
    "Danish", "Finnish", "Icelandic", "Polish", "Czech", "Slovak", "Hungarian", "Romanian", "Bulgarian",
    "Greek", "Turkish", "Russian", "Ukrainian", "Serbian", "Croatian", "Bosnian", "Slovenian",
    "Lithuanian", "Latvian", "Estonian", "Albanian", "Armenian", "Georgian", "Arabic", "Hebrew",
    "Persian", "Farsi", "Urdu", "Hindi", "Bengali", "Punjabi", "Gujarati", "Marathi", "Tamil", "Telugu",
    "Kannada", "Malayalam", "Nepali", "Sinhala", "Chinese", "Mandarin", "Cantonese", "Japanese",
    "Korean", "Vietnamese", "Thai", "Khmer", "Lao", "Burmese", "Indonesian", "Malay", "Tagalog",
    "Filipino", "Swahili", "Amharic", "Yoruba", "Igbo", "Hausa", "Zulu", "Xhosa", "Afrikaans", "Somali",
    "Catalan", "Basque", "Galician", "Welsh", "Irish", "Gaelic", "Latin", "Esperanto", "Yiddish",
    "American Sign Language", "ASL", "British Sign Language", "BSL",
)  # fmt: skip

PROGRAMMING_LANGUAGES = _canon(
    "Python", "Rust", "Go", "JavaScript", "TypeScript", "Java", "Kotlin", "Swift", "C#", "C++", "Ruby",
    "PHP", "Elixir", "Erlang", "Haskell", "Scala", "Clojure", "OCaml", "Julia", "Lua", "Perl", "Dart",
    "Zig", "Nim", "SQL", "MATLAB", "Fortran", "COBOL", "F#", "Objective-C", "Solidity", "Crystal", "Gleam",
)  # fmt: skip
PROGRAMMING_LANGUAGES.update({"golang": "Go", "js": "JavaScript", "ts": "TypeScript", "cpp": "C++"})

OPERATING_SYSTEMS = {
    "macos": "macOS", "mac": "macOS", "macbook": "macOS", "macbook pro": "macOS", "macbook air": "macOS",
    "osx": "macOS", "os x": "macOS", "windows": "Windows", "windows 10": "Windows", "windows 11": "Windows",
    "win11": "Windows", "linux": "Linux", "ubuntu": "Ubuntu", "arch": "Arch Linux", "arch linux": "Arch Linux",
    "debian": "Debian", "fedora": "Fedora", "linux mint": "Linux Mint", "nixos": "NixOS", "manjaro": "Manjaro",
    "pop!_os": "Pop!_OS", "pop os": "Pop!_OS", "chromeos": "ChromeOS", "chromebook": "ChromeOS",
    "freebsd": "FreeBSD", "gentoo": "Gentoo", "opensuse": "openSUSE", "elementary os": "elementary OS",
    "wsl": "Windows (WSL)",
}  # fmt: skip

EDITORS = {
    "vs code": "VS Code", "vscode": "VS Code", "visual studio code": "VS Code", "vim": "Vim",
    "neovim": "Neovim", "nvim": "Neovim", "emacs": "Emacs", "doom emacs": "Emacs", "pycharm": "PyCharm",
    "intellij": "IntelliJ IDEA", "intellij idea": "IntelliJ IDEA", "sublime": "Sublime Text",
    "sublime text": "Sublime Text", "cursor": "Cursor", "zed": "Zed", "webstorm": "WebStorm",
    "xcode": "Xcode", "android studio": "Android Studio", "helix": "Helix", "nano": "nano", "atom": "Atom",
    "notepad++": "Notepad++", "goland": "GoLand", "rider": "Rider", "visual studio": "Visual Studio",
    "rstudio": "RStudio", "clion": "CLion", "phpstorm": "PhpStorm",
}  # fmt: skip

TOOLS = _canon(
    "Docker", "Kubernetes", "Terraform", "Ansible", "Git", "GitHub", "GitLab", "tmux", "zsh", "fish",
    "Slack", "Jira", "Notion", "Figma", "Obsidian", "Postman", "Excel", "Trello", "Asana", "Linear", "AWS",
    "GCP", "Azure", "Heroku", "Vercel", "Postgres", "MySQL", "Redis", "MongoDB", "SQLite", "Kafka",
    "Airflow", "Jenkins", "Grafana", "Prometheus", "nginx", "React", "Vue", "Angular", "Svelte", "Django",
    "Flask", "FastAPI", "Rails", "Spring", "Node", "npm", "Yarn", "pnpm", "Vite", "webpack", "Homebrew",
    "iTerm2", "Warp", "Alacritty", "kitty", "WezTerm", "ChatGPT", "Copilot", "Claude", "Photoshop",
    "Illustrator", "Blender", "Unity", "Unreal", "Tableau", "Power BI", "Salesforce", "HubSpot", "Zoom",
    "Teams", "Discord", "Confluence", "Miro", "1Password", "Bitwarden", "Jupyter", "pandas", "Celery",
    "Supabase", "Firebase", "Snowflake", "dbt", "Spark", "Hadoop", "Sentry", "Datadog", "Cloudflare",
    "Google Sheets", "Google Docs", "Word", "PowerPoint", "Keynote", "Canva", "Lightroom", "Premiere",
    "Final Cut", "Logic Pro", "Ableton", "Anki", "Todoist", "Zotero", "LaTeX", "Overleaf",
)  # fmt: skip
TOOLS.update({"github actions": "GitHub Actions", "circleci": "CircleCI"})
TOOLS.update({"k8s": "Kubernetes", "postgresql": "Postgres", "node.js": "Node", "iterm": "iTerm2"})

# Lower-case spellings that are everyday words; they count only when capitalised in a message
# that uses capitals, or anywhere in an all-lower-case message.
AMBIGUOUS = {
    "go", "swift", "cursor", "linear", "teams", "kitty", "claude", "fish", "arch", "word", "spring",
    "unity", "warp", "rider", "atom", "helix", "nano", "node", "zoom", "git", "excel", "mac", "canva",
    "spark", "sentry", "keynote", "notion", "copilot", "julia", "crystal", "gleam", "lua", "dart",
    "unreal", "blender", "vault", "jest", "pages", "numbers", "photos", "remix", "ruby", "rust",
}  # fmt: skip

JOB_HEADS = {
    "engineer", "developer", "dev", "programmer", "designer", "manager", "scientist", "analyst", "teacher",
    "professor", "lecturer", "nurse", "practitioner", "doctor", "physician", "surgeon", "dentist", "pharmacist", "lawyer",
    "attorney", "paralegal", "accountant", "consultant", "architect", "researcher", "student", "intern",
    "writer", "editor", "journalist", "photographer", "artist", "musician", "chef", "cook", "baker",
    "barista", "bartender", "waiter", "waitress", "cashier", "electrician", "plumber", "carpenter",
    "mechanic", "technician", "pilot", "firefighter", "paramedic", "therapist", "psychologist",
    "counselor", "counsellor", "librarian", "administrator", "recruiter", "founder", "co-founder",
    "cofounder", "ceo", "cto", "cfo", "coo", "director", "marketer", "realtor", "translator", "tutor",
    "coach", "trainer", "veterinarian", "vet", "farmer", "freelancer", "contractor", "specialist",
    "coordinator", "clerk", "receptionist", "secretary", "economist", "statistician", "mathematician",
    "physicist", "chemist", "biologist", "sre", "pm", "officer", "midwife", "caregiver", "social worker",
    "product owner", "scrum master", "tech lead", "team lead", "lead", "owner", "illustrator", "animator",
    "copywriter", "strategist", "salesperson", "entrepreneur", "postdoc", "phd student", "undergrad",
    "auditor", "paediatrician", "pediatrician", "radiographer", "physiotherapist", "optometrist", "optician",
    "dietitian", "nutritionist", "solicitor", "barrister", "banker", "actuary", "bookkeeper", "surveyor",
    "welder", "builder", "roofer", "gardener", "landscaper", "florist", "butcher", "tailor", "hairdresser",
    "barber", "stylist", "actor", "actress", "dancer", "singer", "filmmaker", "curator", "archivist",
    "historian", "geologist", "psychiatrist", "radiologist", "anaesthetist", "anesthesiologist",
    "cardiologist", "neurologist", "dermatologist", "oncologist", "hygienist", "zookeeper",
    "detective", "lifeguard", "nanny", "childminder", "carer", "instructor", "underwriter", "courier",
    "teaching assistant", "headteacher", "bus driver", "taxi driver", "lorry driver", "truck driver",
    "delivery driver", "sous chef", "data engineer", "ux researcher", "veterinary nurse",
    "gp", "general practitioner", "advisor", "adviser", "supervisor", "inspector", "planner", "producer",
    "agent", "broker", "trader", "locksmith", "cleaner", "porter", "steward",
    "stewardess", "flight attendant", "machinist", "labourer", "laborer", "interpreter", "linguist",
    "epidemiologist", "ecologist", "botanist", "astronomer", "sonographer", "phlebotomist", "sommelier",
    "brewer", "jeweller", "jeweler", "potter", "dispatcher", "care worker", "support worker", "youth worker",
    "police officer", "joiner", "plasterer", "decorator",
}  # fmt: skip
# Words before a job head that are not part of the title ("I'm the only designer").
JOB_FILLERS = {"only", "new", "big", "huge", "good", "bad", "great", "aspiring", "wannabe", "lowly", "humble"}

PARTNER_WORDS = {
    "wife": "wife", "husband": "husband", "partner": "partner", "girlfriend": "girlfriend",
    "boyfriend": "boyfriend", "fiance": "fiancé", "fiancé": "fiancé", "fiancee": "fiancée",
    "fiancée": "fiancée", "spouse": "spouse", "gf": "girlfriend", "bf": "boyfriend", "hubby": "husband",
    "wifey": "wife", "other half": "partner", "better half": "partner", "missus": "wife",
}  # fmt: skip
CHILD_WORDS = {
    "son", "daughter", "kid", "child", "stepson", "stepdaughter", "boy", "girl", "baby", "little one",
    "youngest", "eldest", "oldest", "toddler",
}  # fmt: skip
RELATION_WORDS = {
    "mom", "mum", "mother", "dad", "father", "parents", "sister", "brother", "sibling", "siblings",
    "friend", "buddy", "mate", "bestie", "bff", "boss", "manager", "coworker", "co-worker", "colleague",
    "roommate", "flatmate", "housemate", "neighbor", "neighbour", "grandma", "grandpa", "grandmother",
    "grandfather", "nan", "aunt", "uncle", "cousin", "nephew", "niece", "in-laws", "mother-in-law",
    "father-in-law", "sister-in-law", "brother-in-law", "teammate", "classmate", "stepmom", "stepdad",
    "ex", "family",
} | set(PARTNER_WORDS) | CHILD_WORDS  # fmt: skip

PET_SPECIES = {
    "dog", "cat", "puppy", "kitten", "rabbit", "bunny", "hamster", "guinea pig", "parrot", "budgie",
    "bird", "goldfish", "turtle", "tortoise", "snake", "lizard", "gecko", "horse", "pony", "ferret",
    "rat", "chinchilla", "hedgehog", "golden retriever", "labrador", "lab", "poodle", "beagle", "corgi",
    "husky", "pug", "dachshund", "german shepherd", "border collie", "terrier", "chihuahua", "bulldog",
    "french bulldog", "frenchie", "shiba", "shiba inu", "greyhound", "spaniel", "cocker spaniel",
    "rottweiler", "doberman", "schnauzer", "pomeranian", "shih tzu", "collie", "whippet", "labradoodle",
    "goldendoodle", "cockapoo", "dalmatian", "tabby", "siamese", "maine coon", "ragdoll", "sphynx",
    "bengal", "mutt", "rescue dog", "rescue cat", "lurcher",
}  # fmt: skip

HEALTH_CONDITIONS = {
    "asthma", "diabetes", "type 1 diabetes", "type 2 diabetes", "adhd", "autism", "anxiety",
    "depression", "migraines", "migraine", "epilepsy", "ibs", "celiac disease", "coeliac disease",
    "crohn's", "crohn's disease", "arthritis", "rheumatoid arthritis", "ptsd", "ocd", "bipolar disorder",
    "insomnia", "sleep apnea", "high blood pressure", "hypertension", "long covid", "fibromyalgia",
    "endometriosis", "pcos", "lupus", "multiple sclerosis", "hypothyroidism", "psoriasis", "eczema",
    "tinnitus", "scoliosis", "dyslexia", "chronic fatigue", "cancer", "heart disease", "anemia",
    "lactose intolerance", "gluten intolerance", "chronic pain", "back pain", "panic disorder",
    "hayfever", "hay fever", "psoriatic arthritis", "osteoporosis", "vertigo", "sleep apnoea", "anaemia",
    "an eating disorder", "anorexia", "bulimia", "hearing loss", "color blindness", "colour blindness",
    "gout", "glaucoma", "acid reflux", "gerd", "sciatica", "narcolepsy", "tourette's", "dyspraxia",
    "reflux", "heartburn", "torn acl", "acl tear", "tendonitis", "tendinitis", "plantar fasciitis",
    "shingles", "kidney stones", "gallstones", "hernia", "herniated disc", "slipped disc",
    "carpal tunnel", "carpal tunnel syndrome", "rsi", "copd", "cystic fibrosis", "hiv", "hepatitis",
    "hepatitis c", "hyperthyroidism", "graves' disease", "hashimoto's", "diverticulitis",
    "ulcerative colitis", "colitis", "pneumonia", "bronchitis", "cluster headaches", "chronic migraine",
    "rosacea", "alopecia", "vitiligo", "sickle cell", "sickle cell disease", "haemophilia", "hemophilia",
    "heart murmur", "atrial fibrillation", "afib", "angina", "high cholesterol", "prediabetes",
    "pre-diabetes", "postnatal depression", "postpartum depression", "seasonal affective disorder",
    "generalised anxiety disorder", "generalized anxiety disorder", "social anxiety",
    "borderline personality disorder", "bpd", "schizophrenia", "dementia", "parkinson's",
    "parkinson's disease", "alzheimer's", "osteoarthritis", "gestational diabetes", "me/cfs", "pots",
    "ehlers-danlos syndrome", "hypermobility", "adenomyosis", "fibroids", "perimenopause", "menopause",
    "infertility", "concussion", "whiplash", "frozen shoulder", "tennis elbow", "bursitis",
    "a torn meniscus", "torn meniscus", "a slipped disc", "a hernia", "asthma attacks", "food poisoning",
    "thyroid cancer", "breast cancer", "skin cancer",
    "prostate cancer", "leukaemia", "leukemia", "lymphoma", "melanoma", "diabetes type 1",
    "diabetes type 2", "addison's disease", "bell's palsy", "meniere's disease", "raynaud's",
}  # fmt: skip
HEALTH_ADJECTIVES = {
    "diabetic": "diabetes", "asthmatic": "asthma", "epileptic": "epilepsy", "autistic": "autism",
    "dyslexic": "dyslexia", "lactose intolerant": "lactose intolerance",
    "gluten intolerant": "gluten intolerance", "celiac": "celiac disease", "coeliac": "coeliac disease",
    "bipolar": "bipolar disorder", "anemic": "anemia", "colorblind": "color blindness",
    "colour blind": "colour blindness", "color blind": "color blindness", "deaf": "deafness",
    "hard of hearing": "hearing loss", "insomniac": "insomnia", "pregnant": "pregnancy",
}  # fmt: skip
MEDICATIONS = {
    "sertraline", "zoloft", "prozac", "fluoxetine", "lexapro", "escitalopram", "citalopram", "wellbutrin",
    "bupropion", "adderall", "ritalin", "methylphenidate", "vyvanse", "metformin", "insulin",
    "levothyroxine", "lisinopril", "amlodipine", "atorvastatin", "omeprazole", "ibuprofen", "xanax",
    "lithium", "lamotrigine", "venlafaxine", "effexor", "propranolol", "ozempic", "semaglutide",
    "the pill", "birth control", "antidepressants", "melatonin", "gabapentin", "prednisone",
    "elvanse", "concerta", "strattera", "cetirizine", "loratadine", "fexofenadine", "antihistamines",
    "naproxen", "paracetamol", "codeine", "tramadol", "amoxicillin", "mirtazapine", "quetiapine",
    "aripiprazole", "duloxetine", "pregabalin", "hrt", "spironolactone", "finasteride", "salbutamol",
    "ventolin", "mounjaro", "wegovy", "tirzepatide", "lansoprazole", "warfarin", "apixaban", "letrozole",
    "gliclazide", "sitagliptin", "aspirin", "clopidogrel", "amitriptyline", "nortriptyline", "montelukast",
    "budesonide", "carbimazole", "hydroxychloroquine", "methotrexate", "allopurinol", "furosemide",
    "doxycycline", "co-codamol", "topiramate", "levetiracetam", "sodium valproate", "isotretinoin",
    "accutane", "tamoxifen", "estradiol", "progesterone", "testosterone", "thyroxine", "iron tablets",
}  # fmt: skip
MEDICATION_SUFFIXES = (
    "pril", "sartan", "olol", "statin", "prazole", "oxetine", "triptan", "zepam", "gliflozin", "gliptin",
    "dipine", "tidine", "cycline", "floxacin",
)  # fmt: skip

RELIGIONS = _canon(
    "Muslim", "Christian", "Catholic", "Jewish", "Hindu", "Buddhist", "Sikh", "Mormon", "atheist",
    "agnostic", "Protestant", "Jain", "pagan", "Quaker", "Lutheran", "Baptist", "Methodist",
    "Anglican", "Evangelical", "Orthodox", "Shinto", "Taoist", "Bahá'í", "Baha'i",
)  # fmt: skip
POLITICS = _canon(
    "Democrat", "Republican", "conservative", "liberal", "socialist", "libertarian", "progressive",
    "Tory", "centrist", "communist", "anarchist", "Green", "Labour", "Lib Dem", "Liberal Democrat", "SNP",
)  # fmt: skip
DIETS = {
    "vegetarian": "vegetarian", "veggie": "vegetarian", "vegan": "vegan", "pescatarian": "pescatarian",
    "pescetarian": "pescatarian", "keto": "keto", "paleo": "paleo", "gluten-free": "gluten-free",
    "gluten free": "gluten-free", "kosher": "kosher", "halal": "halal", "plant-based": "plant-based",
    "plant based": "plant-based", "dairy-free": "dairy-free", "carnivore": "carnivore",
}  # fmt: skip
# What a pet word says its species is, for values written "Name (species)".
PET_KIND = {
    **{b: "dog" for b in (
        "puppy", "golden retriever", "labrador", "lab", "poodle", "beagle", "corgi", "husky", "pug",
        "dachshund", "german shepherd", "border collie", "terrier", "chihuahua", "bulldog", "french bulldog",
        "frenchie", "shiba", "shiba inu", "greyhound", "spaniel", "cocker spaniel", "rottweiler", "doberman",
        "schnauzer", "pomeranian", "shih tzu", "collie", "whippet", "labradoodle", "goldendoodle", "cockapoo",
        "dalmatian", "mutt", "rescue dog", "lurcher",
    )},
    **{b: "cat" for b in ("kitten", "tabby", "siamese", "maine coon", "ragdoll", "sphynx", "bengal", "rescue cat")},
    "bunny": "rabbit", "budgie": "bird", "puppies": "dog", "bunnies": "rabbit", "kitties": "cat",
}  # fmt: skip
# Body parts an injury names ("I broke my wrist" → broken wrist).
BODY_PARTS = {
    "wrist", "arm", "leg", "ankle", "knee", "foot", "toe", "finger", "hand", "elbow", "shoulder", "hip",
    "collarbone", "rib", "ribs", "nose", "back", "neck", "thumb", "acl", "achilles", "hamstring", "jaw",
}  # fmt: skip

NATIONALITIES = {
    "american", "british", "english", "scottish", "welsh", "irish", "canadian", "australian", "french",
    "german", "spanish", "italian", "portuguese", "dutch", "belgian", "swiss", "austrian", "swedish",
    "norwegian", "danish", "finnish", "polish", "czech", "hungarian", "romanian", "greek", "turkish",
    "russian", "ukrainian", "mexican", "brazilian", "argentinian", "chilean", "colombian", "peruvian",
    "cuban", "chinese", "japanese", "korean", "vietnamese", "thai", "filipino", "indonesian", "indian",
    "pakistani", "bangladeshi", "nigerian", "kenyan", "ghanaian", "egyptian", "moroccan", "israeli",
    "iranian", "lebanese", "syrian", "kiwi", "asian", "european", "african", "latino", "latina", "black",
    "white", "hispanic",
}  # fmt: skip
# Capitalised words that follow "I'm" without being a name.
NOT_NAMES = (
    {
        "ok",
        "okay",
        "fine",
        "good",
        "great",
        "here",
        "back",
        "home",
        "sorry",
        "not",
        "so",
        "just",
        "still",
        "also",
        "really",
        "very",
        "the",
        "a",
        "an",
        "on",
        "in",
        "at",
        "from",
        "into",
        "going",
        "trying",
        "thinking",
        "looking",
        "working",
        "done",
        "ready",
        "sure",
        "glad",
        "happy",
        "sad",
        "tired",
        "busy",
        "new",
        "lost",
        "stuck",
        "confused",
        "curious",
        "excited",
        "afraid",
        "pretty",
        "kinda",
        "literally",
        "actually",
        "always",
        "never",
        "currently",
        "married",
        "single",
        "engaged",
        "pregnant",
        "retired",
        "vegan",
        "vegetarian",
        "gay",
        "straight",
        "bi",
        "trans",
        "allergic",
        "learning",
        "free",
        "available",
        "late",
        "early",
        "out",
        "off",
        "over",
        "all",
        "about",
        "like",
        "down",
        "up",
        "dying",
        "starving",
        "hungry",
        "bored",
        "sick",
        "well",
        "alive",
        "human",
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
        "english",
        "you",
        "me",
        "it",
        "this",
        "that",
        "what",
        "who",
        "hi",
        "hello",
        "hey",
        "yes",
        "no",
        "yeah",
        "nope",
        "again",
        "too",
        "there",
        "definitely",
        "probably",
        "maybe",
        "based",
        "with",
        "your",
    }
    | NATIONALITIES
    | {r.lower() for r in RELIGIONS}
    | set(SPOKEN_LANGUAGES)
)
