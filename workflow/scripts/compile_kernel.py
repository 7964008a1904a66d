"""Snakemake job (rules compile_kernel, compile_library, compile_microbench): nvcc builds one
cubin (or a shared library: registry `backend: shared`) with no path reaching a shell
(mmbench/plan/compile.py), keeps ptxas's report and the build's sha256 (a build that is later
not what it wrote is found and built again: workflow/rules/common.smk)."""

import sys

from mmbench.plan.compile import CompileError, build_job


def main(sm) -> None:
    what = sm.params.what
    built = sm.output.get("cubin") or sm.output.get("library")  # a cubin, or a shared library
    try:
        build_job(
            sm.input.src, built, sm.output.sha, sm.params.arch,
            dict(sm.params.params), sm.log[0], what,
            ptxas=sm.output.ptxas if "ptxas" in sm.output.keys() else None,
            headers=sm.params.get("headers"), name=sm.params.get("name"),
            entries=tuple(sm.params.get("entries", ())),
            shared=bool(sm.params.get("shared", False)),
            libraries=tuple(sm.params.get("libraries", ())),
        )  # fmt: skip
    except CompileError as err:  # CompileInterrupted too: it says so
        sys.exit(str(err))
    except KeyboardInterrupt:
        sys.exit(f"compilation of {what} interrupted")


main(snakemake)  # noqa: F821
