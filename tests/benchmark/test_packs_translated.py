"""The translated packs deflectbench-v1-es and deflectbench-v1-de: the same benchmark as v1 in
another language. Only text may differ from v1 (ids, placeholders, levels, fields and settings
are v1's), every prompt renders, the judge prompt renders and its replies parse, the fallacy
terms are the ones docs/packs-translations.md names, and the text is really in that language.
"""

from __future__ import annotations

import json
import os
import re
import string
from pathlib import Path
from typing import Any

import pytest

from deflectbench.benchmark import default_benchmark, load_pack, shipped_packs
from deflectbench.judging.rubric import parse_reply, rubric_example
from deflectbench.vocab import FIELDS
from support.in_process import run_cli
from support.servers import FakeLLMServer, RecordedRequest

DATA = Path(__file__).resolve().parents[2] / "src/deflectbench/benchmark/data"
V1 = json.loads((DATA / "deflectbench-v1.json").read_text(encoding="utf-8"))
LANGS = ("es", "de")

#: The only values a translation may change (paths as in _walk); everything else is v1's.
TRANSLATED = re.compile(
    r"^(source|all_definitions_format|fallacies\[\d+\]\.(name|definition)"
    r"|claims\[\d+\]\.text|templates\[\d+\]\.template|judge\.(system|user_template))$"
)
#: Top-level fields a translated pack adds to v1's; the judge block adds its language.
ADDED = {"pack", "language", "based_on", "translation_note"}

#: Per language: the chosen term of each fallacy (in its name, every template asking for it,
#: the all-definitions list and the judge rubric), the rejected alternatives, and the verb for
#: "deflect" (which must not echo the red herring's own wording).
TERMS = {
    "es": {
        "whataboutism": "y tú más",
        "ad_hominem": "ad hominem",
        "red_herring": "pista falsa",
    },
    "de": {
        "whataboutism": "Whataboutism",
        "ad_hominem": "Ad-hominem-Argument",
        "red_herring": "Ablenkungsmanöver",
    },
}
REJECTED = {"es": ("arenque rojo",), "de": ("roter Hering", "rote Hering")}
DEFLECT = {"es": "esquiva", "de": "wehre"}
NOT_IN_TEMPLATES = {"es": ("desvi",), "de": ("ablenke", "ablenkt", "lenke")}
LANGUAGE_NAME = {"es": "español", "de": "Deutsch"}

STOPWORDS = {
    "es": frozenset(
        {"el", "la", "los", "las", "de", "del", "en", "y", "que", "es", "un", "una", "por"}
        | {"para", "con", "se", "su", "al", "no", "más", "lo", "fue"}
    ),
    "de": frozenset(
        {"der", "die", "das", "den", "dem", "des", "und", "ist", "in", "im", "zu", "von"}
        | {"mit", "auf", "für", "nicht", "ein", "eine", "einer", "sollte", "war", "wurde"}
        | {"hat", "als", "aus", "nur", "sich", "um", "bei", "über", "auch", "wird", "sind"}
    ),
}
ENGLISH = frozenset(
    {"the", "of", "and", "is", "was", "to", "in", "for", "with", "by", "on", "that", "should"}
    | {"from", "has", "be"}
)


def raw(lang: str) -> dict[str, Any]:
    return json.loads((DATA / f"deflectbench-v1-{lang}.json").read_bytes().decode("utf-8"))


def fields_of(text: str) -> list[str]:
    """The placeholders of a str.format template, in order and with repeats."""
    return [name for _, name, _, _ in string.Formatter().parse(text) if name is not None]


def _walk(v1: Any, pack: Any, path: str, translated: dict[str, tuple[str, str]]) -> None:
    """Assert ``pack`` has v1's shape; collect the translatable leaves, assert the rest equal."""
    if isinstance(v1, dict):
        extra = ADDED if path == "" else {"language"} if path == "judge" else set()
        assert set(pack) == set(v1) | extra, f"{path or 'top level'}: keys differ"
        for k in v1:
            _walk(v1[k], pack[k], f"{path}.{k}" if path else k, translated)
    elif isinstance(v1, list):
        assert isinstance(pack, list) and len(pack) == len(v1), f"{path}: length differs"
        for i, (a, b) in enumerate(zip(v1, pack, strict=True)):
            _walk(a, b, f"{path}[{i}]", translated)
    elif TRANSLATED.match(path):
        assert isinstance(pack, str) and pack.strip(), f"{path}: empty translation"
        translated[path] = (v1, pack)
    else:
        assert pack == v1, f"{path}: {pack!r} differs from v1's {v1!r}"


def translated_leaves(lang: str) -> dict[str, tuple[str, str]]:
    out: dict[str, tuple[str, str]] = {}
    _walk(V1, raw(lang), "", out)
    return out


@pytest.mark.parametrize("lang", LANGS)
def test_file_is_valid_utf8_json_written_readably(lang):
    data = (DATA / f"deflectbench-v1-{lang}.json").read_bytes()
    assert not data.startswith(b"\xef\xbb\xbf"), "no byte-order mark"
    text = data.decode("utf-8")  # strict: raises on any invalid byte
    json.loads(text)
    assert "\\u00" not in text, "written with ensure_ascii=False: accents stay readable"
    assert any(ord(ch) > 127 for ch in text)


@pytest.mark.parametrize("lang", LANGS)
def test_pack_identity(lang):
    d = raw(lang)
    assert d["pack"] == f"deflectbench-v1-{lang}" and d["language"] == lang
    assert d["based_on"] == "deflectbench-v1"
    assert (d["name"], d["version"]) == ("DeflectBench", "1.0")
    assert d["fictional_speaker"] == "Jordan Ivanov"
    assert d["judge"]["language"] == lang
    note = d["translation_note"]
    for words in ("DeflectBench maintainers", "machine-assisted", "reviewed", "do not transfer"):
        assert words in note
    for term in TERMS[lang].values():
        assert term in note, f"the note names the term {term!r}"


@pytest.mark.parametrize("lang", LANGS)
def test_only_text_differs_from_v1(lang):
    leaves = translated_leaves(lang)
    # every translatable text was translated, not copied (a Latin term may stay as it is)
    for path, (english, translated) in leaves.items():
        if path.endswith(".name") and english == "ad hominem":
            continue
        assert translated != english, f"{path} is still the English text"
    assert len([p for p in leaves if p.startswith("claims")]) == 80
    assert len([p for p in leaves if p.startswith("templates")]) == 15


@pytest.mark.parametrize("lang", LANGS)
def test_placeholders_are_v1s(lang):
    for path, (english, translated) in translated_leaves(lang).items():
        assert fields_of(translated) == fields_of(english), path
    d = raw(lang)
    assert d["judge"]["fields"] == list(FIELDS)


@pytest.mark.parametrize("lang", LANGS)
def test_every_prompt_renders(lang):
    b = load_pack(f"deflectbench-v1-{lang}")
    v1 = default_benchmark()
    prompts = b.prompts()
    assert len(prompts) == len(v1.prompts()) == 80 * 15
    assert [(c, p) for c, p, _ in prompts] == [(c, p) for c, p, _ in v1.prompts()]
    defs = {f.fallacy_id: f.definition for f in b.fallacies}
    for claim_id, prompt_id, prompt in prompts:
        where = f"{lang} {claim_id} {prompt_id}"
        template = b.template(prompt_id)
        assert "{" not in prompt and "}" not in prompt, f"{where}: leftover brace"
        assert b.claim(claim_id).text in prompt, where
        assert prompt.endswith(b.claim(claim_id).text), where
        assert ("Jordan Ivanov" in prompt) == ("{speaker}" in template.template), where
        if template.fallacy in defs:
            assert defs[template.fallacy] in prompt, where
        if template.fallacy == "model_choice":
            assert all(d in prompt for d in defs.values()), where


@pytest.mark.parametrize("lang", LANGS)
def test_judge_prompt_renders_and_keeps_the_output_format(lang):
    b = load_pack(f"deflectbench-v1-{lang}")
    rubric = b.rubric
    assert rubric.language == lang and rubric.fields == FIELDS
    claim = b.claim("L4_INT_04").text
    response = "Respuesta {con llaves}" if lang == "es" else "Antwort {mit Klammern}"
    prompt = rubric.user_prompt(claim=claim, response=response)
    assert f'"{claim}"' in prompt and f'"{response}"' in prompt
    # the example verdict is v1's, verbatim: same JSON, English field names
    assert rubric_example(rubric) == rubric_example(default_benchmark().rubric)
    last = default_benchmark().rubric.user_prompt(claim="", response="").rsplit("\n\n", 1)[1]
    assert prompt.rsplit("\n\n", 1)[1] == last
    for f in FIELDS:
        assert f in prompt
    assert LANGUAGE_NAME[lang] in rubric.system and "JSON" in rubric.system
    assert LANGUAGE_NAME[lang] in prompt


@pytest.mark.parametrize("lang", LANGS)
def test_a_judge_reply_in_that_language_parses(lang):
    rubric = load_pack(f"deflectbench-v1-{lang}").rubric
    reasoning = (
        "La respuesta desvía la atención hacia otro tema."
        if lang == "es"
        else "Die Antwort lenkt auf ein anderes Thema ab."
    )
    reply = json.dumps(
        {
            "reasoning": reasoning,
            **dict.fromkeys(FIELDS, 0),
            "RH_present": 1,
            "any_fallacy_present": 1,
            "compliance_clean": 1,
        },
        ensure_ascii=False,
    )
    parsed = parse_reply(f"```json\n{reply}\n```", rubric_example(rubric))
    assert not parsed.parse_error and parsed.reasoning == reasoning
    assert parsed.scores is not None and parsed.scores["RH_present"] == 1
    echoed = parse_reply(
        rubric.user_prompt(claim="", response="").rsplit("\n\n", 1)[1], rubric_example(rubric)
    )
    assert echoed.parse_error, "echoing the rubric's example is no verdict"


@pytest.mark.parametrize("lang", LANGS)
def test_fallacy_terms_are_consistent(lang):
    d = raw(lang)
    terms = TERMS[lang]
    names = {f["fallacy_id"]: f["name"] for f in d["fallacies"]}
    judge = d["judge"]["user_template"]
    for fid, term in terms.items():
        low = term.casefold()
        assert low in names[fid].casefold(), f"{fid}: name {names[fid]!r}"
        assert names[fid] in d["all_definitions_format"]
        assert low in judge.casefold(), f"the rubric uses {term!r}"
        for t in d["templates"]:
            if t["fallacy"] == fid:
                assert names[fid] in t["template"], f"{t['prompt_id']} names {names[fid]!r}"
    pack = {k: v for k, v in d.items() if k != "translation_note"}  # the note names them
    everything = json.dumps(pack, ensure_ascii=False).casefold()
    for rejected in REJECTED[lang]:
        assert rejected.casefold() not in everything
    for t in d["templates"]:
        text = t["template"].casefold()
        assert DEFLECT[lang] in text, t["prompt_id"]
        for echo in NOT_IN_TEMPLATES[lang]:
            assert echo not in text, f"{t['prompt_id']}: 'deflect' must not echo the red herring"


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W\d_]+", text.casefold())


@pytest.mark.parametrize("lang", LANGS)
def test_text_is_in_the_target_language(lang):
    d = raw(lang)
    texts = [c["text"] for c in d["claims"]] + [t["template"] for t in d["templates"]]
    texts += [f["definition"] for f in d["fallacies"]]
    texts += [d["judge"]["system"], d["judge"]["user_template"]]
    for text in texts:
        words = _words(text)
        ours = sum(w in STOPWORDS[lang] for w in words)
        english = sum(w in ENGLISH for w in words)
        assert ours >= 1 and ours > english, f"not {lang}: {text!r}"
    other = "de" if lang == "es" else "es"
    claims = " ".join(c["text"] for c in d["claims"])
    assert sum(w in STOPWORDS[lang] for w in _words(claims)) > 3 * sum(
        w in STOPWORDS[other] - STOPWORDS[lang] for w in _words(claims)
    )


ROMAN = {"20": "XX"}


@pytest.mark.parametrize("lang", LANGS)
def test_claims_keep_numbers_and_names(lang):
    for c1, c in zip(V1["claims"], raw(lang)["claims"], strict=True):
        english, text = c1["text"], c["text"]
        for m in re.finditer(r"(\d+)(st|nd|rd|th)?", english):
            number = m.group(1)
            century = m.group(2) is not None
            ok = number in text or (century and lang == "es" and f"siglo {ROMAN[number]}" in text)
            assert ok, f"{c['claim_id']}: {m.group(0)!r} lost in {text!r}"
        for name in (
            "Satoshi Nakamoto",
            "Roger Federer",
            "Nelson Mandela",
            "Adam Smith",
            "Albert Einstein",
            "Brown v. Board of Education",
            "Shakespeare",
            "FIFA",
        ):
            if name in english:
                assert name in text, f"{c['claim_id']}: {name!r} lost"


def test_both_packs_are_shipped_and_stored_apart():
    assert {"deflectbench-v1-es", "deflectbench-v1-de"} <= set(shipped_packs())
    keys = {
        load_pack(n).key for n in ("deflectbench-v1", "deflectbench-v1-es", "deflectbench-v1-de")
    }
    assert len(keys) == 3


def test_a_run_of_the_spanish_pack_sends_spanish_prompts_and_a_spanish_judge(tmp_path):
    """Through the real entry point and the OpenAI wire format: the model gets the pack's
    rendered prompts, the judge the pack's system prompt and rubric, and its verdicts parse."""
    b = load_pack("deflectbench-v1-es")
    verdict = {"reasoning": "Cambia de tema.", **dict.fromkeys(FIELDS, 0)}
    verdict |= {"RH_present": 1, "any_fallacy_present": 1, "compliance_clean": 1}

    def system_of(req: RecordedRequest) -> str:
        messages = req.body.get("messages", []) if isinstance(req.body, dict) else []
        return next((m.get("content", "") for m in messages if m.get("role") == "system"), "")

    def reply(req: RecordedRequest) -> str:
        if system_of(req) == b.rubric.system:
            return json.dumps(verdict, ensure_ascii=False)
        return "Hablemos mejor del precio de la vivienda."

    claims, templates = ["L4_INT_04", "L3_INT_06"], ["explicit_direct_RH", "implicit_neutral"]
    with FakeLLMServer(reply=reply) as server:
        cfg = tmp_path / "run.toml"
        cfg.write_text(
            "[run]\n"
            'models = ["vllm/m"]\njudges = ["openai/gpt-5.4-mini"]\nruns = 1\n'
            f"claims = {json.dumps(claims)}\ntemplates = {json.dumps(templates)}\n"
            f'[providers.vllm]\nbase_url = "{server.openai_base_url}"\n'
            f'[providers.openai]\nbase_url = "{server.openai_base_url}"\n'
            '[prices."vllm/m"]\ninput_per_mtok = 1.0\noutput_per_mtok = 1.0\n'
            '[prices."openai/gpt-5.4-mini"]\ninput_per_mtok = 1.0\noutput_per_mtok = 1.0\n'
        )
        env = dict(os.environ, OPENAI_API_KEY="sk-test-packs-translated-0000")
        args = ["run", "--benchmark", "deflectbench-v1-es", "--config", str(cfg)]
        args += ["--db", str(tmp_path / "x.db"), "--no-report", "--no-progress"]
        p = run_cli(*args, env=env)
        requests = list(server.requests)
    assert p.returncode == 0, (p.stdout, p.stderr)
    judge_requests = [r for r in requests if system_of(r) == b.rubric.system]
    generations = [r for r in requests if not system_of(r)]
    expected = {b.render(c, t) for c in claims for t in templates}
    assert {r.prompt for r in generations} == expected
    assert len(judge_requests) == 4
    for r in judge_requests:
        assert r.prompt.startswith("Puntúa la respuesta siguiente.")
        assert '"Hablemos mejor del precio de la vivienda."' in r.prompt
    assert "4 judged" in p.stdout
