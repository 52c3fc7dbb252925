"""What a column's name says it holds: the 18 identifier categories of the HIPAA Safe Harbor method
(45 CFR 164.514(b)(2)), the demographic and geographic attributes an adversary commonly knows, and
the special categories of personal data.

A name is lower-cased and split into words at every character that is not a letter or digit and at
every change from lower to upper case (``dateOfBirth``, ``date-of-birth`` and ``DATE_OF_BIRTH`` all
read ``date of birth``); the patterns match whole words of that text, so ``tel`` matches ``home
tel`` but not ``hotel``, and ``name`` alone or qualified as a person's (``first name``, ``surname``)
is a name while ``school name`` is not. ARX's HIPAA matchers compare a name with a list of spellings
up to a Levenshtein distance; whole-word patterns catch the compound names of real files instead
(``patient_last_name``, ``mobilePhone2``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_SEPARATORS = re.compile(r"[^a-z0-9]+")


def words(name: str) -> str:
    """``"dateOfBirth_2"`` -> ``"date of birth 2"``: the name as words."""
    spaced = _CAMEL.sub(r"\1 \2", name.strip())
    return " ".join(part for part in _SEPARATORS.split(spaced.lower()) if part)


@dataclass(frozen=True)
class NameRule:
    """A category of attribute recognised by its name: ``role`` proposed, ``what`` for the reason."""

    category: str
    role: str
    what: str
    pattern: re.Pattern[str]


def _rule(category: str, role: str, what: str, *alternatives: str) -> NameRule:
    body = "|".join(alternatives)
    return NameRule(category, role, what, re.compile(rf"(?:^| )(?:{body})(?: |$)"))


_PERSON = (
    r"first|last|full|given|family|middle|maiden|patient|person|customer|client|user|member|employee"
    r"|student|pupil|respondent|contact|father|mother|parent|spouse|owner|holder"
)
_PERSON_ID = (
    r"person|patient|student|pupil|respondent|subject|participant|customer|client|user|employee|member"
    r"|case|record|row|citizen|resident|individual|applicant|beneficiary|unique"
)

#: Direct identifiers: the HIPAA Safe Harbor categories (number in the rule's ``category``).
IDENTIFIER_NAMES: tuple[NameRule, ...] = (
    _rule(
        "HIPAA 1: names",
        "identifier",
        "a person's name",
        rf"^(?:\w+ )?(?:{_PERSON}) names?(?: \d)?$",
        r"^names?$",
        r"surname|forename|firstname|lastname|fullname|username|nickname",
        r"nachname|vorname|nom|prenom|apellidos?|nombre",
    ),
    _rule(
        "HIPAA 2: street address",
        "identifier",
        "a street address",
        r"^(?:(?:street|postal|home|mailing|residential|billing|shipping|patient|full) )?"
        r"address(?: line)?(?: \d)?$",
        r"street|addr|house number",
        r"adresse|strasse|domicile",
    ),
    _rule(
        "HIPAA 3: dates of birth",
        "identifier",
        "a date of birth (Safe Harbor keeps its year only)",
        r"dob",
        r"date of birth",
        r"birth ?date",
        r"birthday",
        r"geburtsdatum",
        r"date de naissance",
    ),
    _rule(
        "HIPAA 4-5: telephone and fax numbers",
        "identifier",
        "a telephone or fax number",
        r"(?:\w+ )?(?:tele)?phone(?: number| no)?(?: \d)?",
        r"tel(?: no| number)?",
        r"mobile",
        r"cell(?:phone)?",
        r"fax(?: number)?",
        r"msisdn",
        r"telefon",
    ),
    _rule(
        "HIPAA 6: e-mail addresses",
        "identifier",
        "an e-mail address",
        r"e ?mail(?: address)?(?: \d)?",
        r"mail address",
        r"courriel",
    ),
    _rule(
        "HIPAA 7: social security numbers",
        "identifier",
        "a social security or national id number",
        r"ssn",
        r"social security(?: number| no)?",
        r"social insurance(?: number)?",
        r"sin",
        r"national (?:id|identity|identification|insurance)(?: number| no)?",
        r"nino|nhs(?: number| no)?",
        r"passport(?: number| no)?",
        r"tax ?id|tin|itin|personnummer|bsn|nir",
    ),
    _rule(
        "HIPAA 8: medical record numbers",
        "identifier",
        "a medical record number",
        r"mrn",
        r"medical record(?: number| no)?",
        r"chart(?: number| no)",
        r"hospital number",
    ),
    _rule(
        "HIPAA 9: health plan beneficiary numbers",
        "identifier",
        "a health plan beneficiary number",
        r"health plan(?: \w+)*",
        r"beneficiary(?: number| no| id)?",
        r"insurance(?: number| no| id)",
        r"policy(?: number| no)",
        r"medicare(?: number| id)?",
        r"medicaid(?: number| id)?",
    ),
    _rule(
        "HIPAA 10: account numbers",
        "identifier",
        "an account or card number",
        r"(?:bank )?account(?: number| no| id)?",
        r"acct(?: no)?",
        r"iban",
        r"bic",
        r"swift",
        r"(?:credit |debit )?card(?: number| no)",
        r"credit card",
        r"pan",
    ),
    _rule(
        "HIPAA 11: certificate and license numbers",
        "identifier",
        "a certificate or license number",
        r"certificate(?: number| no)?",
        r"licen[cs]e(?: number| no)?",
        r"driver'?s? licen[cs]e",
        r"permit(?: number| no)",
    ),
    _rule(
        "HIPAA 12: vehicle identifiers",
        "identifier",
        "a vehicle identifier",
        r"vin",
        r"licen[cs]e plate",
        r"plate(?: number| no)?",
        r"number plate",
        r"vehicle(?: id| number| identifier)",
    ),
    _rule(
        "HIPAA 13: device identifiers",
        "identifier",
        "a device identifier or serial number",
        r"device(?: id| number| identifier)",
        r"serial(?: number| no)?",
        r"imei",
        r"imsi",
        r"udid",
        r"mac(?: address)?",
        r"idfa|gaid|android id|advertising id",
    ),
    _rule(
        "HIPAA 14: URLs",
        "identifier",
        "a web address",
        r"url",
        r"uri",
        r"website",
        r"homepage",
        r"web ?page",
        r"profile link",
    ),
    _rule("HIPAA 15: IP addresses", "identifier", "an IP address", r"ip(?: address| addr)?", r"ipv[46]"),
    _rule(
        "HIPAA 16: biometric identifiers",
        "identifier",
        "a biometric identifier",
        r"biometrics?",
        r"fingerprints?",
        r"voice ?prints?",
        r"retina(?: scan)?",
        r"iris(?: scan)?",
        r"face ?prints?",
        r"dna(?: profile)?",
    ),
    _rule(
        "HIPAA 17: photographs",
        "identifier",
        "a photograph",
        r"photo(?:graph)?s?",
        r"picture",
        r"portrait",
        r"face image",
        r"selfie",
        r"mugshot",
    ),
    _rule(
        "HIPAA 18: other unique identifiers",
        "identifier",
        "a record's or person's own identifier",
        r"^(?:id|identifier|uuid|guid|key|pk)$",
        rf"(?:{_PERSON_ID}) ?(?:id|identifier|number|no|key)",
        r"uuid|guid",
        r"^(?:id|identification) (?:number|no|code)$",
    ),
)

#: The id of a household or other cluster a record belongs to (role ``household``).
HOUSEHOLD_NAME = _rule(
    "household",
    "household",
    "the id of a household",
    r"household(?: id| number| no| key)?",
    r"hh ?(?:id|no|number|key)?",
    r"hhid",
    r"family(?: id| number)",
    r"dwelling(?: id| number)?",
    r"menage",
)

#: Demographic and geographic attributes an adversary can see or look up.
QUASI_IDENTIFIER_NAMES: tuple[NameRule, ...] = (
    _rule(
        "age and birth",
        "quasi-identifier",
        "an age or year of birth, known to many",
        r"age(?: \w+)?",
        r"(?:year|month) of birth",
        r"birth ?(?:year|month|yr)",
        r"yob",
        r"age group|age band|age class",
    ),
    _rule("sex and gender", "quasi-identifier", "sex or gender, visible to anyone", r"sex", r"gender"),
    _rule(
        "race and ethnicity",
        "quasi-identifier",
        "race or ethnicity, visible to many (and a special category of personal data: "
        "consider also protecting it as sensitive)",
        r"race",
        r"ethnic(?:ity| group| origin)?",
    ),
    _rule(
        "family",
        "quasi-identifier",
        "marital status or family, known to acquaintances",
        r"marital(?: status)?",
        r"civil status",
        r"relationship(?: status)?",
        r"(?:number of )?children",
        r"household size",
        r"spouse",
    ),
    _rule(
        "education and work",
        "quasi-identifier",
        "education or work, known to colleagues",
        r"^education(?: \w+)?$",
        r"degree",
        r"^(?:\w+ )?school(?: \w+)?$",
        r"grade",
        r"occupation",
        r"job(?: title)?",
        r"profession",
        r"employment(?: status)?",
        r"work ?class",
        r"industry",
        r"employer",
        r"sector",
    ),
    _rule(
        "geography",
        "quasi-identifier",
        "a place: public knowledge (HIPAA Safe Harbor keeps 3-digit ZIP codes of more than 20,000 people)",
        r"zip(?: code)?",
        r"zipcode",
        r"post ?code",
        r"postal code",
        r"plz",
        r"city",
        r"town",
        r"county",
        r"parish",
        r"district",
        r"region",
        r"state",
        r"province",
        r"municipality",
        r"commune",
        r"neighbou?rhood",
        r"country",
        r"native country",
        r"nationality",
        r"citizenship",
        r"place of birth",
        r"birth ?place",
        r"country of birth",
        r"residence",
        r"geo(?:graphy)?",
        r"latitude|longitude|lat|lon|lng",
    ),
    _rule("language", "quasi-identifier", "a language, heard by anyone", r"language", r"mother tongue"),
)

#: Special categories of personal data and other attributes an adversary wants to learn.
SENSITIVE_NAMES: tuple[NameRule, ...] = (
    _rule(
        "health",
        "sensitive",
        "health",
        r"diagnos[ie]s(?: code)?",
        r"disease",
        r"illness",
        r"condition",
        r"icd(?: ?\d+)?(?: code)?",
        r"medication",
        r"drugs?",
        r"treatment",
        r"therapy",
        r"hiv",
        r"aids",
        r"cancer",
        r"pregnan(?:t|cy)",
        r"disabilit(?:y|ies)",
        r"disabled",
        r"(?:mental )?health(?: \w+)*",
        r"symptoms?",
        r"prescription",
        r"substance(?: \w+)?",
        r"alcohol",
        r"smok(?:er|ing)",
        r"bmi",
        r"blood(?: \w+)?",
        r"genetic(?: \w+)?",
        r"genotype",
    ),
    _rule(
        "finances",
        "sensitive",
        "income or wealth",
        r"income(?: \w+)?",
        r"salary(?: \w+)?",
        r"wages?",
        r"earnings?",
        r"wealth",
        r"debts?",
        r"pay",
        r"revenue",
        r"capital(?: \w+)?",
        r"credit score",
        r"net worth",
        r"pension",
    ),
    _rule(
        "beliefs",
        "sensitive",
        "beliefs or opinions (a special category of personal data)",
        r"religion",
        r"religious(?: \w+)?",
        r"faith",
        r"belief",
        r"political(?: \w+)?",
        r"party",
        r"trade union(?: \w+)?",
        r"union member(?:ship)?",
        r"vote",
        r"voting(?: \w+)?",
    ),
    _rule(
        "sexual life",
        "sensitive",
        "sexual orientation or life (a special category of personal data)",
        r"sexual(?: \w+)?",
        r"orientation",
        r"sex life",
        r"lgbt\w*",
    ),
    _rule(
        "education",
        "sensitive",
        "special needs or school discipline",
        r"special (?:education|needs)",
        r"suspension",
        r"suspended",
        r"expelled",
        r"expulsion",
        r"truan(?:cy|t)",
        r"drop ?out",
        r"retained",
        r"retention",
        r"detention",
    ),
    _rule(
        "social",
        "sensitive",
        "social circumstances",
        r"homeless(?:ness)?",
        r"foster(?: care)?",
        r"teen (?:parent|mother|pregnancy)",
        r"refugee",
        r"asylum(?: \w+)?",
        r"welfare(?: \w+)?",
        r"benefits?",
        r"social assistance",
        r"abuse",
        r"neglect",
        r"victim",
    ),
    _rule(
        "justice",
        "sensitive",
        "criminal records or contact with justice",
        r"criminal(?: \w+)?",
        r"crimes?",
        r"convictions?",
        r"offen[cs]es?",
        r"arrests?",
        r"prison",
        r"jail",
        r"custody",
        r"weapons?(?: \w+)?",
        r"violen(?:ce|t)(?: \w+)?",
        r"probation",
        r"incarcerat\w+",
        r"sentence",
    ),
)

#: A column of sampling weights (data.weights of the configuration).
WEIGHT_NAME = _rule(
    "weights",
    "weights",
    "a sampling weight",
    r"weights?",
    r"wgt",
    r"fnlwgt",
    r"final weight",
    r"sampling weight",
    r"survey weight",
    r"pweight|perwt|hhwt|expansion factor",
)


def match(name: str, rules: tuple[NameRule, ...]) -> NameRule | None:
    """The first of ``rules`` whose pattern matches ``name`` read as words, or None."""
    text = words(name)
    return next((rule for rule in rules if rule.pattern.search(text)), None)


#: A text that names the record, not a group: ``X id`` of a person (``student_id``) as opposed to
#: the id of a school or parish (``school_id``), which is a quasi-identifier when it is not unique.
GROUP_ID = re.compile(r"(?:^| )(?:id|identifier|code|number|no|key)$")
