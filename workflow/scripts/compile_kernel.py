"""Snakemake job (rules compile_kernel, compile_microbench): nvcc builds one cubin with no path
reaching a shell (mmbench/plan/compile.py), keeps ptxas's report and the cubin's sha256 (a cubin
that is later not what its build wrote is found and built again: workflow/rules/common.smk)."""

import sys

from mmbench.plan.compile import CompileError, build_job


def main(sm) -> None:
    what = sm.params.what
    try:
        build_job(
            sm.input.src, sm.output.cubin, sm.output.sha, sm.params.arch,
            dict(sm.params.params), sm.log[0], what,
            ptxas=sm.output.ptxas if "ptxas" in sm.output.keys() else None,
            headers=sm.params.get("headers"), name=sm.params.get("name"),
            entries=tuple(sm.params.get("entries", ())),
        )  # fmt: skip
    except CompileError as err:  # CompileInterrupted too: it says so
        sys.exit(str(err))
    except KeyboardInterrupt:
        sys.exit(f"compilation of {what} interrupted")


main(snakemake)  # noqa: F821
