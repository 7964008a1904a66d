"""The journal of a measurement job: resume keys and torn lines (no GPU)."""

import json

from mmbench.measure.journal import journal_key, read_journal


def test_journal_key_changes_with_what_the_result_depends_on():
    conf = dict(variant="v", m=1)
    s5, s6 = {"sampling": {"min_samples": 5}}, {"sampling": {"min_samples": 6}}
    k = journal_key(conf, "cubin1", "src1", s5, "hostA-GPU-1")
    assert k == journal_key(dict(conf), "cubin1", "src1", s5, "hostA-GPU-1")
    assert k != journal_key(conf, "cubin2", "src1", s5, "hostA-GPU-1")
    assert k != journal_key(conf, "cubin1", "src2", s5, "hostA-GPU-1")
    assert k != journal_key(conf, "cubin1", "src1", s6, "hostA-GPU-1")
    assert k != journal_key(dict(conf, m=2), "cubin1", "src1", s5, "hostA-GPU-1")
    # another GPU (a requeued SLURM job on another node, a copied results folder)
    assert k != journal_key(conf, "cubin1", "src1", s5, "hostB-GPU-2")


def test_read_journal_ignores_a_torn_last_line(tmp_path):
    j = tmp_path / "t.jsonl"
    lines = [
        {"device": {"name": "GPU"}},
        {"start": "a"},
        {"key": "a", "row": {"verification": "PASS"}},
        {"start": "b"},
    ]
    j.write_text("\n".join(json.dumps(x) for x in lines) + '\n{"key": "b", "ro')
    rows, started, device = read_journal(j)
    assert rows == {"a": {"verification": "PASS"}}
    assert started == ["a", "b"]
    assert device == {"name": "GPU"}
    assert read_journal(tmp_path / "missing.jsonl") == ({}, [], None)


def test_a_job_whose_every_configuration_failed_is_a_failed_job():
    from mmbench.measure.jobs import nothing_measured

    err = {"verification": "ERROR", "error": "CUDARuntimeError: cudaErrorIllegalAddress"}
    why = nothing_measured([err, dict(err, error="OutOfMemoryError")])
    assert why.startswith("every configuration of this job failed (2 ERROR rows)")
    assert "cudaErrorIllegalAddress" in why
    assert nothing_measured([err, {"verification": "FAIL"}]) is None  # FAIL is a measurement
    assert nothing_measured([]) is None
