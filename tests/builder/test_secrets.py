"""Secrets never leave the process (issue 29): a credential in an annotator URL, NCBI_API_KEY, OPENAI_API_KEY
and HF_TOKEN are written nowhere (release, stage folders, stderr), and ``validate`` refuses a release that
holds something that looks like a credential."""

from __future__ import annotations

import json

import fault_cases as cases
import pytest
from faults_61_servers import TOKEN_PLACES, plant_token
from llm_server import FakeOpenAI, real_pairs, write_pairs

from biodivergence_cli.main import main
from biodivergence_dataset.redact import MASK, find_credentials, redact, redact_data
from biodivergence_dataset.validate import validate_release
from builder.annotators import parse_spec
from builder.collect import CollectConfig
from builder.collect import run_stage as collect
from builder.release_stage import run_stage as release_stage
from builder.split import SplitConfig
from builder.split import run_stage as split

URL_SECRET, ENV_SECRETS, PLANTED = cases.URL_SECRET, cases.ENV_SECRETS, cases.PLANTED


@pytest.fixture
def secret_env():
    with cases.secret_environment():
        yield


def test_redact_masks_user_info_secret_parameters_and_environment_secrets(secret_env):
    text = (f"GET https://eutils.example/esearch.fcgi?db=pubmed&api_key={ENV_SECRETS['NCBI_API_KEY']}&term=x "
            f"openai:http://user:{URL_SECRET}@127.0.0.1:8/v1?model=m&token=abc bearer {ENV_SECRETS['HF_TOKEN']}")
    cleaned = redact(text)
    assert not any(secret in cleaned for secret in PLANTED) and "token=abc" not in cleaned
    assert "http://***@127.0.0.1:8/v1?model=m" in cleaned and "db=pubmed&api_key=***&term=x" in cleaned
    assert redact("no secret: a 2024 https://example.org/page?id=3 risk-adjusted") == \
        "no secret: a 2024 https://example.org/page?id=3 risk-adjusted"
    assert redact_data({"api_key": "xyz", "urls": [f"http://u:p@h/?key={URL_SECRET}"], "n": 3}) == \
        {"api_key": MASK, "urls": ["http://***@h/?key=***"], "n": 3}
    assert find_credentials(cleaned) == []


def test_log_records_and_uncaught_tracebacks_are_redacted(secret_env, caplog, capsys, monkeypatch):
    import logging
    import sys

    from biodivergence_dataset.redact import install_redaction

    factory = logging.getLogRecordFactory()
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)  # restored after the test
    install_redaction()
    try:
        with caplog.at_level(logging.WARNING, logger="builder.annotate"):
            logging.getLogger("builder.annotate").warning("server %s failed", f"http://u:{URL_SECRET}@127.0.0.1/v1")
    finally:
        logging.setLogRecordFactory(factory)
    assert caplog.messages == ["server http://***@127.0.0.1/v1 failed"]
    try:
        raise RuntimeError(f"GET https://x/esearch.fcgi?api_key={ENV_SECRETS['NCBI_API_KEY']}")
    except RuntimeError as exc:
        sys.excepthook(type(exc), exc, exc.__traceback__)
    err = capsys.readouterr().err
    assert "Traceback" in err and "api_key=***" in err and ENV_SECRETS["NCBI_API_KEY"] not in err


def test_annotator_identity_is_the_redacted_spec():
    spec = parse_spec(f"openai:http://user:{URL_SECRET}@127.0.0.1:9/v1?model=m")
    assert str(spec) == "openai:http://***@127.0.0.1:9/v1?model=m"
    assert URL_SECRET in spec.url  # still used for the requests
    with pytest.raises(ValueError) as err:
        parse_spec(f"openai:http://user:{URL_SECRET}@127.0.0.1:9/v1")  # no model
    assert URL_SECRET not in str(err.value) and "***" in str(err.value)


def test_no_planted_secret_reaches_the_release_the_stage_folders_or_the_terminal(tmp_path, secret_env, capfd):
    """annotate with a fake OpenAI server whose URL carries ``user:sk-…@``, then split into a release; a run
    with the server down and a failing ``collect pubmed`` too; grep every file and both streams."""
    work = tmp_path / "work"
    pairs = write_pairs(work / "pairs", real_pairs(40))
    with FakeOpenAI(models=("m",), userinfo=f"user:{URL_SECRET}") as server:
        spec = server.spec("m")
        assert main(["annotate", str(pairs), "--out", str(work / "annotations"), "--annotator", spec,
                     "--no-progress"]) == 0
        assert server.requests[0]["headers"]["Authorization"].startswith("Basic ")  # the URL's credentials in use
        # a failing collect: the E-utilities URL of the error carries api_key=NCBI_API_KEY
        assert main(["collect", "pubmed", "--out", str(work / "raw"), "--query", "x[tiab]",
                     "--base-url", server.url + "/eutils/", "--rate", "100"]) == 1
    assert main(["annotate", str(pairs), "--out", str(work / "down"), "--annotator", spec, "--no-progress"]) == 1
    split(work / "annotations", work / "release", SplitConfig(oversized_components="carve"))
    release_stage(None, work / "release")
    assert main(["card", "--release", str(work / "release")]) == 0
    out, err = capfd.readouterr()
    assert "***@127.0.0.1" in err and "api_key=***" in err  # the errors still say which server
    assert cases.files_holding_secrets(work) == {}
    assert [s for s in PLANTED if s in out + err] == []
    release = work / "release"
    assert "***@127.0.0.1" in (release / "annotation_manifest.json").read_text()
    provenance = json.loads((work / "annotations" / "provenance.json").read_text())
    assert provenance["annotator"] == [f"openai:http://***@127.0.0.1:{server.port}/v1?model=m"]
    assert provenance["backend"]["url"] == f"http://***@127.0.0.1:{server.port}/v1"
    assert not any("looks like a credential" in p for p in validate_release(release).problems)


def test_collect_error_does_not_print_the_ncbi_key(tmp_path, secret_env):
    with FakeOpenAI() as server, pytest.raises(RuntimeError) as err:
        collect([], tmp_path / "raw", CollectConfig(queries=["x[tiab]"], base_url=server.url + "/eutils/", rate=100,
                                                    retries=0))
    assert "HTTP 404" in str(err.value) and "api_key=***" in str(err.value)
    assert ENV_SECRETS["NCBI_API_KEY"] not in str(err.value)


@pytest.mark.parametrize("planted", [f"http://user:{URL_SECRET}@host/v1", "sk-proj0123456789abcdefXYZ",
                                     "hf_abcdefghijklmnopqrstuvwxyz0123", "https://x.org/e?api_key=abcdef012345"])
def test_validate_fails_on_a_release_holding_a_credential(tmp_path, planted, capsys):
    release = cases.two_shard_release(tmp_path / "release")
    assert validate_release(release).ok
    cases.plant_credential(release, planted)
    problems = [p for p in validate_release(release).problems if "looks like a credential" in p]
    assert len(problems) == 1 and "provenance.json" in problems[0]
    assert main(["validate", "--release", str(release)]) == 1
    assert main(["push", "--release", str(release), "--repo", "org/biodivergence", "--tag", "v1.0", "--dry-run"]) == 1
    out = capsys.readouterr().out
    assert "a real push would refuse" in out
    assert planted not in out  # the problem names the file and the kind, not the secret


@pytest.mark.parametrize("userinfo", ["user:abc'PW9", "user:abc PW9", "user:sk-A@SECRET9", 'us"er:p@ss word'])
def test_the_whole_user_info_of_a_url_is_masked_whatever_its_characters(userinfo):
    """httpx accepts and sends a password holding a quote, a space or a further '@': none of it may be left."""
    spec = f"openai:http://{userinfo}@127.0.0.1:8/v1?model=m"
    cleaned = redact(f"annotator {spec} failed")
    assert cleaned == "annotator openai:http://***@127.0.0.1:8/v1?model=m failed"
    assert find_credentials(spec) and not find_credentials(cleaned)


def test_a_server_body_echoing_the_urls_password_or_a_command_line_key_is_masked(tmp_path):
    """Once an annotator URL is read, its user and password are secrets wherever they appear (a 401 body that
    echoes them); a key given with --api-key is masked as one from the environment is."""
    parse_spec("openai:http://alice:Pw%40echo-42@127.0.0.1:9/v1?model=m")
    assert redact("401: bad credentials alice:Pw@echo-42") == "401: bad credentials ***"
    assert redact("password Pw%40echo-42 refused") == "password *** refused"
    key = "cmdline-key-7f3a9c"
    with FakeOpenAI() as server, pytest.raises(RuntimeError) as err:
        collect([], tmp_path / "raw", CollectConfig(queries=["x[tiab]"], base_url=server.url + "/eutils/", rate=100,
                                                    retries=0, api_key=key))
    assert key not in str(err.value)
    assert redact(f"API key invalid: {key}") == "API key invalid: ***"


@pytest.mark.parametrize("where", TOKEN_PLACES)
def test_validate_finds_a_credential_in_any_encoding_and_in_parquet_cells(tmp_path, where):
    release = cases.two_shard_release(tmp_path / "release")
    token = "hf_abcdefghijklmnopqrstuvwxyz0123"
    target = plant_token(release, where, token)
    every = validate_release(release).problems
    problems = [p for p in every if "looks like a credential" in p]
    assert len(problems) == 1 and str(target) in problems[0]
    assert not [p for p in every if token in p]  # nor quoted by another check (the card's text shows test rows)


def test_no_secret_in_any_form_reaches_a_file_or_the_terminal(tmp_path, secret_env, capfd):
    """Issue 61: every way a user or a server hands the process a secret, at once: URL passwords holding a quote,
    a second '@', a space or a percent-encoded '@' (annotate, then split, card, validate, push --dry-run), a 401 body
    quoting the credentials it was sent, NCBI quoting a key given with --api-key, a key in an annotator spec's
    query, push --token, and the environment's secrets; then every file written and every line printed is grepped
    for each secret and for the tail a partial mask would leave."""
    from faults_61_servers import ScriptedServer, json_answer, openai

    forms = {"user:abc'PW-planted-61q": "PW-planted-61q", "user:sk-A@SECRET-planted-61a": "SECRET-planted-61a",
             "user:abc PW-planted-61s": "PW-planted-61s", "user:Pw%40planted-61p": "planted-61p"}
    key, query_key, token = "cmdline0ncbi0key0f3a9c61", "sk-queryPlanted61abcdef0123", "hf_planted61TokenGiven0123"
    planted = [*PLANTED, *forms, *(u.split(":", 1)[1] for u in forms), *forms.values(), "Pw@planted-61p",
               "Pw@echo-61x", "echo-61x", key, query_key, token]
    work = tmp_path / "work"
    pairs = write_pairs(work / "pairs", real_pairs(40))
    codes = []
    for n, userinfo in enumerate(forms):
        with FakeOpenAI(models=("m",), userinfo=userinfo) as server:
            codes.append(main(["annotate", str(pairs), "--out", str(work / f"labels{n}"), "--annotator",
                               server.spec("m"), "--no-progress"]))
    release = work / "release"
    split(work / "labels0", release, SplitConfig(oversized_components="carve"))
    release_stage(None, release)
    codes += [main(["card", "--release", str(release)]), main(["validate", "--release", str(release)]),
              main(["push", "--release", str(release), "--repo", "org/biodivergence", "--tag", "v1.0", "--dry-run",
                    "--token", token])]

    def quote_credentials(request, n=0):
        return json_answer(401, {"error": f"Incorrect credentials '{request.basic_auth}' for alice:Pw%40echo-61x"})

    def quote_key(request, n=0):
        return json_answer(400, {"error": "API key invalid", "api-key": request.query.get("api_key", [""])[0]})

    with ScriptedServer(openai(chat=quote_credentials)) as server:
        codes.append(main(["annotate", str(pairs), "--out", str(work / "echo"), "--annotator",
                           server.spec("alice:Pw%40echo-61x"), "--limit", "2", "--max-attempts", "1",
                           "--no-progress"]))
        codes.append(main(["annotate", str(pairs), "--out", str(work / "query"), "--annotator",
                           f"openai:{server.url}/v1?model=m&api_key={query_key}", "--no-progress"]))
    with ScriptedServer(quote_key) as server:
        codes.append(main(["collect", "pubmed", "--out", str(work / "raw"), "--query", "x[tiab]", "--api-key", key,
                           "--base-url", server.url + "/eutils/", "--rate", "100"]))
        assert server.requests[0].query["api_key"] == [key]  # the key was sent, and echoed back
    assert codes == [0, 0, 0, 0, 0, 0, 0, 1, 1, 1]
    out, err = capfd.readouterr()
    assert "***@127.0.0.1" in err and "api_key=***" in err  # the errors still name the server
    files = {s: [str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file() and s.encode() in
                 p.read_bytes()] for s in planted}
    assert {s: f for s, f in files.items() if f} == {}
    assert [s for s in planted if s in out + err] == []
