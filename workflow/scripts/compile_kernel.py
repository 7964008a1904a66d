"""Snakemake job (rules compile_kernel, compile_microbench): nvcc builds one cubin with no path
reaching a shell (mmbench/plan/compile.py), keeps ptxas's report and the cubin's sha256 (a cubin
that is later not what its build wrote is found and built again: workflow/rules/common.smk)."""

import sys
from pathlib import Path

from mmbench.plan.compile import CompileError, compile_cubin


def main(sm) -> None:
    what = sm.params.what
    try:
        sha = compile_cubin(
            sm.input.src, sm.output.cubin, sm.params.arch, dict(sm.params.params), sm.log[0],
            what, headers=sm.params.get("headers"), name=sm.params.get("name"),
        )  # fmt: skip
    except CompileError as err:  # CompileInterrupted too: it says so
        sys.exit(str(err))
    except KeyboardInterrupt:
        sys.exit(f"compilation of {what} interrupted")
    # (Snakemake removes a failed job's outputs: no partial file is ever taken as built)
    if "ptxas" in sm.output.keys():
        Path(sm.output.ptxas).write_text(Path(sm.log[0]).read_text())
    Path(sm.output.sha).write_text(f"{sha}  {sm.output.cubin}\n")


main(snakemake)  # noqa: F821
