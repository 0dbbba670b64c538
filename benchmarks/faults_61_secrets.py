"""Issue 61's faults, part one: output folders of the user's, the card, secrets in every form a user or a server
can give them (a URL's password with a quote, a second '@' or a space; a 401 body echoing it; a key on the command
line echoed by NCBI; a token in any encoding beside a release), an interrupted card and a folder in use."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from faultlib import (
    REFUSED,
    Case,
    FakeOpenAI,
    cases,
    first_error,
    last_line,
    real_pairs,
    run_cli,
    write_pairs,
    write_small_release,
)
from faults_61_servers import Request, ScriptedServer, json_answer, openai, plant_token

PUSH = ("--repo", "org/biodivergence", "--tag", "v1.0", "--dry-run")


def grep(root: Path, secrets: tuple[str, ...]) -> list[str]:
    """The files under ``root`` holding any of ``secrets`` (bytes, as written)."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()
                  and any(s.encode() in p.read_bytes() for s in secrets))


# --------------------------------------------------------------------------- 61.1, 61.2: the user's folders


def esearch_empty(request: Request, n: int):
    """E-utilities answering every esearch with no hit."""
    return json_answer(200, {"esearchresult": {"count": "0", "retmax": "0", "retstart": "0", "idlist": []}})


def user_collect_folder(work: Path) -> Path:
    folder = work / "theirs"
    folder.mkdir()
    for name, payload in {"manifest.json": {"name": "my corpus", "version": 3}, "stats.json": {"records": 1200},
                          "sources.json": [{"url": "https://example.org/feed"}],
                          "questions.json": [{"question_id": "q1", "query": "statins[tiab]"}]}.items():
        (folder / name).write_text(json.dumps(payload), encoding="utf-8")
    return folder


def collect_into_user_folder(force: bool) -> Callable[[Path], str]:
    def run(work: Path) -> str:
        theirs = user_collect_folder(work)
        before = cases.folder_bytes(theirs)
        with ScriptedServer(esearch_empty) as server:
            args = ("collect", "pubmed", "--out", theirs, "--query", "x[tiab]", "--base-url", server.url + "/eutils/",
                    "--rate", "100", *(("--force",) if force else ()))
            code, _, err = run_cli(*args)
        if not force:
            return (f"exit {code}: {first_error(err)}; folder unchanged: {cases.folder_bytes(theirs) == before}; "
                    f"requests sent: {len(server.requests)}")
        aside = work / "theirs.aside-1"
        return (f"exit {code}; the user's files moved intact to theirs.aside-1: "
                f"{aside.is_dir() and cases.folder_bytes(aside) == before}; theirs now collect's: "
                f"{sorted(p.name for p in theirs.iterdir())}")
    return run


def card_over_user_readme(work: Path) -> str:
    root = write_small_release(work / "release")
    (root / "release_files.json").unlink()
    mine = b"# my notes\n\nDo not overwrite.\n"
    (root / "README.md").write_bytes(mine)
    code, _, err = run_cli("card", "--release", root)
    return f"exit {code}: {first_error(err)}; README byte-identical: {(root / 'README.md').read_bytes() == mine}"


def card_over_plain_folder(work: Path) -> str:
    folder = work / "notes"
    folder.mkdir()
    (folder / "README.md").write_bytes(b"# my notes\n")
    before = cases.folder_bytes(folder)
    code, _, err = run_cli("card", "--release", folder)
    return f"exit {code}: {first_error(err)[:200]}; folder unchanged: {cases.folder_bytes(folder) == before}"


# --------------------------------------------------------------------------- 61.3: a URL's password, any characters


def userinfo_pipeline(userinfo: str, fragment: str) -> Callable[[Path], str]:
    """annotate with ``userinfo`` in the server's URL, split, release stage, card; validate and push --dry-run;
    grep every file and stream for the password and for ``fragment`` (what a partial mask would leave)."""
    def run(work: Path) -> str:
        import base64
        from urllib.parse import unquote

        from biodivergence_dataset.validate import validate_release
        from builder.release_stage import run_stage as release_stage
        from builder.split import SplitConfig
        from builder.split import run_stage as split

        password = userinfo.split(":", 1)[1]
        folder = write_pairs(work / "pairs", real_pairs(40))
        with FakeOpenAI(models=("m",), userinfo=userinfo) as server:
            streams = [run_cli("annotate", folder, "--out", work / "labels", "--annotator", server.spec("m"),
                               "--no-progress")]
            sent = server.requests[0]["headers"].get("Authorization", "") if server.requests else ""
        used = sent == "Basic " + base64.b64encode(unquote(userinfo).encode()).decode()  # httpx sends it decoded
        rel = work / "release"
        split(work / "labels", rel, SplitConfig(oversized_components="carve"))
        release_stage(None, rel)
        streams.append(run_cli("card", "--release", rel))
        streams.append(run_cli("validate", "--release", rel))
        streams.append(run_cli("push", "--release", rel, *PUSH))
        printed = "".join(out + err for _, out, err in streams)
        leaks = grep(work, (password, fragment))
        names = {f: json.loads((d / f).read_text())["annotator"]
                 for d, f in ((work / "labels", "annotation_manifest.json"), (rel, "annotation_manifest.json"))}
        credentials = [p for p in validate_release(rel).problems if "credential" in p]
        return (f"exit codes {[c for c, _, _ in streams]}; server got the URL's credentials: {used}; files holding "
                f"the password or its tail: {leaks}; on stdout/stderr: {password in printed or fragment in printed}; "
                f"the release names the annotator {names['annotation_manifest.json']}; validate credential "
                f"problems: {len(credentials)}")
    return run


# --------------------------------------------------------------------------- 61.4, 61.5: servers echoing secrets

ECHO_USERINFO = "alice:Pw%40echo-61x"  # the password is Pw@echo-61x once decoded


def echo_401(where: str) -> Callable[[Path], str]:
    """A server answering 401 with a body that quotes the credentials it was sent (decoded), at the start-up
    check or on every chat request."""
    def refuse(request: Request, n: int = 0):
        return json_answer(401, {"error": {"message": f"Incorrect credentials '{request.basic_auth}' (password "
                                                      f"{request.basic_auth.split(':', 1)[1]}); URL user:pass "
                                                      f"{ECHO_USERINFO}", "type": "invalid_request_error"}})

    def run(work: Path) -> str:
        answer = openai(health=refuse) if where == "check" else openai(chat=refuse)
        folder = write_pairs(work / "pairs", real_pairs(6))
        with ScriptedServer(answer) as server:
            code, out, err = run_cli("annotate", folder, "--out", work / "labels", "--annotator",
                                     server.spec(ECHO_USERINFO), "--max-attempts", "2", "--timeout", "5",
                                     "--no-progress")
            posts = len(server.posts)
        secrets = ("Pw@echo-61x", "Pw%40echo-61x", "echo-61x")
        return (f"exit {code}: {first_error(err)[:260]}; chat requests {posts}; files holding the password: "
                f"{grep(work, secrets)}; on stdout/stderr: {any(s in out + err for s in secrets)}")
    return run


NCBI_KEY = "cmdline0ncbi0key0f3a9c61"


def key_echo(form: str) -> Callable[[Path], str]:
    """``collect --api-key KEY`` against E-utilities that quote the key back: NCBI's 400 ``API key invalid``
    body, or an esearch ``ERROR`` holding it."""
    def answer(request: Request, n: int):
        key = request.query.get("api_key", [""])[0]
        if form == "400":
            return json_answer(400, {"error": "API key invalid", "api-key": key, "type": "invalid",
                                     "status": "unknown"})
        return json_answer(200, {"esearchresult": {"ERROR": f"Invalid API key {key} for term x[tiab]"}})

    def run(work: Path) -> str:
        with ScriptedServer(answer) as server:
            code, out, err = run_cli("collect", "pubmed", "--out", work / "raw", "--query", "x[tiab]", "--api-key",
                                     NCBI_KEY, "--base-url", server.url + "/eutils/", "--rate", "100")
            got = server.requests[0].query.get("api_key") == [NCBI_KEY] if server.requests else False
        return (f"exit {code}: {first_error(err)[:200]}; the server got the key: {got}; key printed: "
                f"{NCBI_KEY in out + err}; files holding it: {grep(work, (NCBI_KEY,))}")
    return run


# --------------------------------------------------------------------------- 61.6: beside the release

HUB_TOKEN = "hf_abcdefghijklmnopqrstuvwxyz0123"


def token_beside_release(where: str) -> Callable[[Path], str]:
    def run(work: Path) -> str:
        rel = cases.two_shard_release(work / "release")
        plant_token(rel, where, HUB_TOKEN)
        code, out, err = run_cli("validate", "--release", rel)
        found = [line for line in out.splitlines() if "credential" in line]
        return (f"exit {code}: {' / '.join(found)}; token printed: {HUB_TOKEN in out + err}")
    return run


def stray_top_level_file(work: Path) -> str:
    rel = write_small_release(work / "release")
    (rel / "notes.txt").write_text(f"my notes; token {HUB_TOKEN}\n", encoding="utf-8")
    code, _, _ = run_cli("card", "--release", rel)
    listed = json.loads((rel / "release_files.json").read_text())["files"]
    dry, plan, err = run_cli("push", "--release", rel, *PUSH)
    return (f"card exit {code}, release_files.json lists notes.txt: {'notes.txt' in listed}; push --dry-run exit "
            f"{dry}, lists notes.txt for upload: {'notes.txt  (' in plan or 'notes.txt' in plan.split('error:')[0]}; "
            f"{last_line(plan)}; token printed: {HUB_TOKEN in plan + err}")


def hub_token(given: str) -> Callable[[Path], str]:
    """push --dry-run with HF_TOKEN set, or with ``--token``: the token is never printed."""
    def run(work: Path) -> str:
        rel = write_small_release(work / "release")
        run_cli("card", "--release", rel)
        token = "hf_planted61TokenGivenHere0123"
        if given == "env":
            token = cases.ENV_SECRETS["HF_TOKEN"]
            with cases.secret_environment():
                code, out, err = run_cli("push", "--release", rel, *PUSH)
        else:
            code, out, err = run_cli("push", "--release", rel, *PUSH, "--token", token)
        return (f"exit {code}: {last_line(out)[:120]}; token printed: {token in out + err}; files holding it: "
                f"{grep(work, (token,))}")
    return run


# --------------------------------------------------------------------------- 61.10, 61.12


def card_interrupted(work: Path) -> str:
    from release_factory import make_splits

    from biodivergence_dataset import card
    from biodivergence_dataset import release as dataset_release

    rel = write_small_release(work / "release")
    first, _, _ = run_cli("validate", "--release", rel, "--min-support", "1")
    dataset_release.write_config(rel, "primary", make_splits(offset=100))  # the data changes: the card is re-rendered
    real = card.write_file_manifest

    def interrupted(_):
        raise KeyboardInterrupt

    card.write_file_manifest = interrupted
    try:
        code, _, err = run_cli("card", "--release", rel)
    finally:
        card.write_file_manifest = real
    after, out, _ = run_cli("validate", "--release", rel, "--min-support", "1")
    problem = next((line for line in out.splitlines() if "changed" in line or "since" in line), "none")
    return f"validate before: exit {first}; card: exit {code}: {last_line(err)}; validate after: exit {after}: {problem}"


def annotate_in_use(work: Path) -> str:
    from builder.annotate import STAGE
    from builder.folders import build_lock, claim_output

    folder = write_pairs(work / "pairs", real_pairs(6))
    out = claim_output(work / "labels", STAGE)
    with FakeOpenAI(models=("m",)) as server:
        args = ("annotate", folder, "--out", out, "--annotator", server.spec("m"), "--no-progress")
        with build_lock(out):
            code, _, err = run_cli(*args)
            wrote = sorted(p.name for p in out.iterdir() if p.name not in (".build.lock", ".biodivergence_stage.json"))
            asked = len(server.requests) + server.health_checks
        again, _, _ = run_cli(*args)
    return (f"exit {code}: {first_error(err).replace(str(os.getpid()), '<PID>')}; requests {asked}; written "
            f"{wrote}; once the first ends: exit {again}")


PIPELINE_OK = (r"^exit codes \[0, 0, [01], 0\]; server got the URL's credentials: True; files holding the password or "
               r"its tail: \[\]; on stdout/stderr: False; the release names the annotator "
               r"\['openai:http://\*\*\*@127\.0\.0\.1:PORT/v1\?model=m'\]; validate credential problems: 0$")

CASES: list[Case] = [
    Case("61.1", "collect pubmed --out a folder holding the user's manifest.json, stats.json, sources.json, "
         "questions.json", "refused naming the folder, nothing changed, no request sent",
         collect_into_user_folder(False), REFUSED + r".*theirs is not the output of any stage.*it holds: manifest.json"
         r".*folder unchanged: True; requests sent: 0$"),
    Case("61.1", "the same with --force", "the user's files moved aside intact; collect writes a new folder",
         collect_into_user_folder(True), r"^exit 0; the user's files moved intact to theirs.aside-1: True; theirs "
         r"now collect's: \[.*'sources.yaml'.*\]$"),
    Case("61.2", "card --release on a release folder holding the user's README.md and no release_files.json",
         "refused, README byte-identical", card_over_user_readme,
         REFUSED + r".*README.md was not written by biodivergence card.*README byte-identical: True$"),
    Case("61.2", "card --release on a folder holding only the user's README.md", "refused, nothing changed",
         card_over_plain_folder, REFUSED + r".*folder unchanged: True$"),
    Case("61.3", "annotate via openai:http://user:abc'PW…@host (a quote in the password), split, card, validate, "
         "push --dry-run", "no part of the password in any file or stream; release names the redacted spec",
         userinfo_pipeline("user:abc'PW-planted-61q", "PW-planted-61q"), PIPELINE_OK),
    Case("61.3", "the same with a second '@' in the password (user:sk-A@SECRET…@host)",
         "no part of the password in any file or stream; release names the redacted spec",
         userinfo_pipeline("user:sk-A@SECRET-planted-61a", "SECRET-planted-61a"), PIPELINE_OK),
    Case("61.3", "the same with a space in the password (user:abc PW…@host)",
         "no part of the password in any file or stream; release names the redacted spec",
         userinfo_pipeline("user:abc PW-planted-61s", "PW-planted-61s"), PIPELINE_OK),
    Case("61.3", "the same with a percent-encoded '@' in the password (user:Pw%40…@host)",
         "neither the encoded nor the decoded password in any file or stream",
         userinfo_pipeline("user:Pw%40planted-61p", "planted-61p"), PIPELINE_OK),
    Case("61.4", "the start-up check answered 401 with a body quoting user:password (decoded)",
         "exit 1 naming the server; the password masked on stderr and in every file", echo_401("check"),
         REFUSED + r".*openai server at http://\*\*\*@127\.0\.0\.1:PORT/v1 is not usable.*HTTP 401.*chat requests 0; "
         r"files holding the password: \[\]; on stdout/stderr: False$"),
    Case("61.4", "every chat request answered 401 with a body quoting user:password",
         "failed attempts, fallbacks, exit 1; the password in no file (raw_responses.jsonl included) nor stream",
         echo_401("chat"), REFUSED + r".*6 of 6 pairs .*fell back.*chat requests 6; files holding the password: "
         r"\[\]; on stdout/stderr: False$"),
    Case("61.5", "collect --api-key KEY, E-utilities answer 400 {'error': 'API key invalid', 'api-key': KEY}",
         "exit 1; the key neither printed nor in any file", key_echo("400"),
         REFUSED + r".*HTTP 400.*the server got the key: True; key printed: False; files holding it: \[\]$"),
    Case("61.5", "collect --api-key KEY, esearch answers ERROR 'Invalid API key KEY'",
         "exit 1; the key neither printed nor in any file", key_echo("ERROR"),
         REFUSED + r".*esearch for .*Invalid API key \*\*\*.*the server got the key: True; key printed: False; "
         r"files holding it: \[\]$"),
    Case("61.6", "an hf_ token in a latin-1 notes.txt beside the release", "validate exit 1 naming the file, not the "
         "token", token_beside_release("latin-1"), REFUSED + r"error: release/notes.txt: holds what looks like a "
         r"credential \(Hugging Face token.*token printed: False$"),
    Case("61.6", "an hf_ token in a UTF-16 notes.txt beside the release", "validate exit 1 naming the file, not the "
         "token", token_beside_release("UTF-16"), REFUSED + r"error: release/notes.txt: holds what looks like a "
         r"credential \(Hugging Face token.*token printed: False$"),
    Case("61.6", "an hf_ token in a Parquet string cell (primary/test reconciliation)",
         "validate exit 1 naming the shard, not the token", token_beside_release("Parquet"),
         REFUSED + r".*error: release/primary/test-\S+\.parquet: holds what looks like a credential \(Hugging Face "
         r"token.*token printed: False$"),
    Case("61.6", "a stray top-level notes.txt (holding a token) in a release, then card and push --dry-run",
         "card does not list it; push --dry-run does not list it; the token is not printed", stray_top_level_file,
         r"^card exit 0, release_files.json lists notes.txt: False; push --dry-run exit 1, lists notes.txt for upload: "
         r"False; a real push would refuse: \d problem\(s\); token printed: False$"),
    Case("61.6", "push --dry-run with an hf_ token in HF_TOKEN", "the token never printed nor written",
         hub_token("env"), r"^exit \d: .*token printed: False; files holding it: \[\]$"),
    Case("61.6", "push --dry-run --token hf_…", "the token never printed nor written", hub_token("option"),
         r"^exit \d: .*token printed: False; files holding it: \[\]$"),
    Case("61.10", "Ctrl-C in card between the README and the file list (data changed since the last card)",
         "card exits 130; validate then fails", card_interrupted,
         r"^validate before: exit 0; card: exit 130: interrupted.*validate after: exit 1: .*(changed|since)"),
    Case("61.12", "a second annotate (LLM annotator) on an --out another annotate holds",
         "refused at once naming the first's PID, no request, nothing written; runs once the first ends",
         annotate_in_use, REFUSED + r".*in use by another run \(PID <PID>\).*requests 0; written \[\]; once the "
         r"first ends: exit 0$"),
]
