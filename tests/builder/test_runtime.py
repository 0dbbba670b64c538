"""The stage runtime (builder/runtime.py): sharded stages on datatrove's local, Slurm and Ray executors give the
same output as one task, resume after a failed rank, and never reuse a stale rank."""

from __future__ import annotations

import itertools
import os
import stat
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import yaml
from repo_paths import SHARED_DATA

from biodivergence_dataset import io
from biodivergence_dataset.records import Abstract, CandidatePair, Claim
from builder import build, checks, claims, embeddings, mine, runtime
from builder.runtime import RuntimeConfig, ShardJob

os.environ.setdefault("HF_HUB_OFFLINE", "1")
DOMAINS = ("clinical_trials_epidemiology", "oncology")


@pytest.fixture(scope="module")
def abstracts_dir(tmp_path_factory) -> Path:
    """120 real PubMedQA abstracts in two domains."""
    out = tmp_path_factory.mktemp("abstracts")
    abstracts = checks.pubmedqa_abstracts(SHARED_DATA / "pubmedqa_pqal" / "ori_pqal.json")[:120]
    abstracts = [a.model_copy(update={"domain": DOMAINS[i % 2]}) for i, a in enumerate(abstracts)]
    io.write_records(out, abstracts, io.StageStats("ingest"))
    return out


@pytest.fixture(scope="module")
def one_task(abstracts_dir, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("claims") / "one"
    claims.run_stage(abstracts_dir, out, claims.ClaimsConfig(), RuntimeConfig())
    return out


def _output(stage_dir: Path) -> tuple[list[bytes], str]:
    return [p.read_bytes() for p in io.shard_paths(stage_dir)], (stage_dir / io.STATS_FILE).read_text()


def test_rank_slices_cover_every_record_once():
    for n in (0, 1, 7, 120):
        for world in (1, 2, 3, 8):
            slices = [runtime.rank_slice(n, r, world) for r in range(world)]
            assert slices[0][0] == 0 and slices[-1][1] == n
            assert all(a[1] == b[0] for a, b in itertools.pairwise(slices))


def test_claims_are_the_same_for_any_task_count(abstracts_dir, one_task, tmp_path):
    shards, stats = _output(one_task)
    assert shards and '"kept"' in stats
    for tasks, workers in ((3, 1), (2, 2)):  # in this process, and in datatrove's worker processes
        out = tmp_path / f"tasks{tasks}"
        claims.run_stage(abstracts_dir, out, claims.ClaimsConfig(), RuntimeConfig(tasks=tasks, workers=workers))
        assert _output(out) == (shards, stats)
        assert not (out / runtime.TASKS_DIR).exists()  # the task folders go once the stage is written


def test_dropped_sentences_are_kept_with_their_reason_for_any_task_count(abstracts_dir, one_task, tmp_path):
    config = claims.ClaimsConfig(keep_exclusions=True, max_claims_per_abstract=2)
    kept = {}
    for tasks in (1, 3):
        out = tmp_path / f"tasks{tasks}"
        stats = claims.run_stage(abstracts_dir, out, config, RuntimeConfig(tasks=tasks, workers=1))
        kept[tasks] = list(io.read_exclusions(out))
        assert len(kept[tasks]) == stats[io.DROPPED_TOTAL] > 0
        assert {f"dropped_{r}": n for r, n in Counter(e.reason for e in kept[tasks]).items()} == {
            k: v for k, v in stats.items() if k.startswith("dropped_") and k != io.DROPPED_TOTAL}
    assert kept[1] == kept[3] and "over_abstract_cap" in {e.reason for e in kept[1]}
    texts = {a.article_uid: a.text for a in io.read_records(abstracts_dir, Abstract)}
    for e in kept[1]:
        r = e.record
        assert texts[r["article_uid"]][r["start"]:r["end"]] == r["sentence"]
        assert e.record_id == f"{r['article_uid']}:{r['start']}-{r['end']}"
    assert not io.shard_paths(one_task, io.EXCLUDED_PREFIX)  # off by default
    claims.run_stage(abstracts_dir, tmp_path / "tasks1", claims.ClaimsConfig(max_claims_per_abstract=2))
    assert not io.shard_paths(tmp_path / "tasks1", io.EXCLUDED_PREFIX)  # turned off: none stale


def test_a_failed_rank_is_rerun_alone(abstracts_dir, one_task, tmp_path, monkeypatch):
    bad = list(io.read_records(abstracts_dir, Abstract))[100].article_uid  # in the last of 3 ranks
    real, seen = claims.iter_claims, []

    def failing(abstracts, config, stats):
        for a in abstracts:
            if a.article_uid == bad:
                raise RuntimeError("killed")
            yield a
    monkeypatch.setattr(claims, "iter_claims", lambda abstracts, c, s: real(failing(abstracts, c, s), c, s))
    out, config = tmp_path / "claims", RuntimeConfig(tasks=3, workers=1)
    with pytest.raises(RuntimeError, match="killed"):
        claims.run_stage(abstracts_dir, out, claims.ClaimsConfig(), config)
    assert not io.is_done(out)
    [parts] = (out / runtime.TASKS_DIR).iterdir()
    assert sorted(p.name for p in (parts / "logs" / "completions").iterdir()) == ["00000", "00001"]

    def counting(abstracts, c, s):
        return real((seen.append(a.article_uid) or a for a in abstracts), c, s)
    monkeypatch.setattr(claims, "iter_claims", counting)
    claims.run_stage(abstracts_dir, out, claims.ClaimsConfig(), config)
    assert len(seen) == 40 and bad in seen  # only the failed rank ran again
    assert _output(out) == _output(one_task)


class _FailingConfig(claims.ClaimsConfig, extra="allow"):
    """Claims' config with the article to fail on (``bad``)."""


def _fail_on_the_last_abstract(abstracts, config, stats):
    """A stage function that fails on rank 1 of 2 (module level: worker processes import it by name)."""
    for a in abstracts:
        if a.article_uid == config.model_extra["bad"]:
            raise ValueError(f"unreadable abstract {a.article_uid}")
        yield a


def test_a_rank_failing_in_a_worker_process_fails_the_stage_with_its_error(abstracts_dir, tmp_path):
    bad = list(io.read_records(abstracts_dir, Abstract))[-1].article_uid
    job = ShardJob("claims", _fail_on_the_last_abstract, _FailingConfig(bad=bad), abstracts_dir, Abstract, Abstract,
                   "abstracts")
    with pytest.raises(ValueError, match=f"unreadable abstract {bad}"):
        runtime.run_sharded(job, tmp_path / "out", RuntimeConfig(tasks=2, workers=2))
    [parts] = (tmp_path / "out" / runtime.TASKS_DIR).iterdir()
    assert sorted(p.name for p in (parts / "logs" / "completions").iterdir()) == ["00000"]  # rank 0 finished


def test_task_key_changes_with_config_input_and_task_count(abstracts_dir, tmp_path):
    def key(config=None, tasks=2, input_dir=abstracts_dir):
        return ShardJob("claims", claims.map_abstracts, config or claims.ClaimsConfig(), input_dir, Abstract, Claim,
                        "sentences").key(tasks)

    copy = tmp_path / "copy"
    copy.mkdir()
    for f in abstracts_dir.iterdir():
        (copy / f.name).write_bytes(f.read_bytes())
    assert key() == key(input_dir=copy)  # a copied work folder resumes
    assert len({key(), key(tasks=3), key(config=claims.ClaimsConfig(min_score=0.9))}) == 3
    stale = tmp_path / "out" / runtime.TASKS_DIR / "0123456789abcdef"
    stale.mkdir(parents=True)
    job = ShardJob("claims", claims.map_abstracts, claims.ClaimsConfig(), abstracts_dir, Abstract, Claim, "sentences")
    records, stats = runtime.run_sharded(job, tmp_path / "out", RuntimeConfig(tasks=2, workers=1))
    assert not stale.exists() and stats.kept == len(list(records)) > 0


FAKE_SBATCH = """#!/bin/bash
# A stand-in for sbatch: runs every task of the array job in the script here, one after another.
script="${@: -1}"
RUN_OFFSET=0
for a in "$@"; do case "$a" in --export=*RUN_OFFSET=*) RUN_OFFSET="${a##*RUN_OFFSET=}";; esac; done
cp "$script" "$FAKE_SBATCH_DIR/job-$(ls "$FAKE_SBATCH_DIR" | wc -l).slurm"
range=$(grep -o -- '--array=[0-9]*-[0-9]*' "$script" | cut -d= -f2)
for i in $(seq "${range%-*}" "${range#*-}"); do
  SLURM_ARRAY_TASK_ID=$i SLURM_NODELIST=localhost RUN_OFFSET=$RUN_OFFSET bash "$script" >>"$FAKE_SBATCH_DIR.log" 2>&1 || exit 1
done
echo "Submitted batch job 4242"
"""


def test_slurm_executor_submits_an_array_job_whose_ranks_give_the_same_claims(abstracts_dir, one_task, tmp_path,
                                                                               monkeypatch):
    bin_dir, jobs = tmp_path / "bin", tmp_path / "jobs"
    bin_dir.mkdir()
    jobs.mkdir()
    for name, script in (("sbatch", FAKE_SBATCH), ("scontrol", "#!/bin/bash\necho localhost\n")):  # hostnames
        tool = bin_dir / name
        tool.write_text(script)
        tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent), os.environ["PATH"]]))
    monkeypatch.setenv("FAKE_SBATCH_DIR", str(jobs))
    config = RuntimeConfig(executor="slurm", tasks=2, slurm={"partition": "cpu", "cpus_per_task": 3,
                                                            "sbatch_args": {"account": "bio"}, "poll_seconds": 1})
    out = tmp_path / "claims"
    claims.run_stage(abstracts_dir, out, claims.ClaimsConfig(), config)
    assert _output(out) == _output(one_task)
    array_job = (jobs / "job-0.slurm").read_text()
    for line in ("#SBATCH --partition=cpu", "#SBATCH --cpus-per-task=3", "#SBATCH --account=bio",
                 "#SBATCH --array=0-1", "launch_pickled_pipeline"):
        assert line in array_job


@pytest.mark.slow  # starts a local Ray cluster
def test_ray_executor_gives_the_same_claims(abstracts_dir, one_task, tmp_path):
    out = tmp_path / "claims"
    claims.run_stage(abstracts_dir, out, claims.ClaimsConfig(),
                     RuntimeConfig(executor="ray", tasks=2, ray={"cpus_per_task": 1, "mem_per_cpu_gb": 0.5}))
    assert _output(out) == _output(one_task)


def test_mining_embeds_on_ranks_with_the_vectors_of_one_encode_call(tmp_path):
    root = tmp_path
    abstracts = checks.pubmedqa_abstracts(SHARED_DATA / "pubmedqa_pqal" / "ori_pqal.json")[:30]
    abstracts = [a.model_copy(update={"domain": DOMAINS[i % 2]}) for i, a in enumerate(abstracts)]
    io.write_records(root / "abstracts", abstracts, io.StageStats("ingest"))
    claims.run_stage(root / "abstracts", root / "claims")
    runs = {}
    for tasks in (1, 3):
        out = root / f"pairs{tasks}"
        stats = mine.run_stage(root / "claims", out, mine.MineConfig(batch_size=16),
                               RuntimeConfig(tasks=tasks, workers=1))
        runs[tasks] = [(p.pair_id, p.scores) for p in io.read_records(out, CandidatePair)]
        assert stats["embedding_cache"]["embedded"] == stats["embedding_cache"]["unique_texts"] > 16 * tasks
        assert not (out / embeddings.BATCHES_DIR).exists() and not (out / runtime.TASKS_DIR).exists()
    assert runs[1] == runs[3] and runs[1]
    # the cached vectors are those of one encode call over the distinct sentences (the pre-runtime miner)
    sentences = list(dict.fromkeys(c.sentence for c in io.read_records(root / "claims", Claim)))
    encoder = embeddings.load_encoder()
    direct = encoder.encode(sentences, batch_size=16, normalize_embeddings=True, convert_to_numpy=True)
    cache = embeddings.open_cache(root / "pairs3" / "embedding_cache", mine.MineConfig().model,
                                  embeddings.embedding_dimension(encoder))
    cached = np.stack([cache.get(embeddings.text_key(s)) for s in sentences])
    assert np.array_equal(cached, direct.astype(np.float32))


def test_runtime_file_replaces_the_build_configs_runtime(tmp_path):
    config = tmp_path / "build.yaml"
    config.write_text(yaml.safe_dump({"sources": ["pubmed_xml:x.xml"], "runtime": {"tasks": 2}}))
    assert build.load_config(config).runtime.tasks == 2
    shipped = Path(build.__file__).parent / "configs" / "runtime"
    loaded = {f.stem: build.load_config(config, f).runtime for f in sorted(shipped.glob("*.yaml"))}
    assert {name: r.executor for name, r in loaded.items()} == {"local": "local", "ray": "ray", "slurm": "slurm"}
    assert loaded["slurm"].slurm.partition and loaded["local"].tasks > 1
    bad = tmp_path / "bad.yaml"
    bad.write_text("executor: slurm\ntasks: 2\n")
    with pytest.raises(ValueError, match="slurm: section"):
        build.load_config(config, bad)
