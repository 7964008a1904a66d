"""Snakemake job (rule compile_triton): one Triton instantiation lowered by Triton's compiler
and assembled by ptxas into a cubin that names itself, Triton's launch facts beside it
(mmbench/plan/triton_build.py); ptxas's report and the cubin's sha256 kept too."""

import sys
from pathlib import Path

from mmbench.plan.compile import CompileError
from mmbench.plan.triton_build import build


def main(sm) -> None:
    what = sm.params.what
    try:  # refused past the opt-in limit of shared memory of the arch's compute capability
        digest, _ = build(
            sm.input.src, sm.params.symbol, sm.output.cubin, sm.params.arch,
            dict(sm.params.params), sm.log[0], what,
        )  # fmt: skip
    except CompileError as err:  # said in the job's log too
        Path(sm.log[0]).parent.mkdir(parents=True, exist_ok=True)
        with open(sm.log[0], "a") as log:
            log.write(f"{err}\n")
        sys.exit(str(err))
    except KeyboardInterrupt:
        sys.exit(f"compilation of {what} interrupted")
    Path(sm.output.ptxas).write_text(Path(sm.log[0]).read_text())
    Path(sm.output.sha).write_text(f"{digest}  {sm.output.cubin}\n")


main(snakemake)  # noqa: F821
