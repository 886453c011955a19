"""The outputs of `batch`, `project`, `compare` and `census` on one
generated population, kept in a folder, and compared file by file with
another folder's: to show that a change of how the code is arranged changes no
output.

    python bench/diff_outputs.py --save before/            # before the change
    python bench/diff_outputs.py --save after/ --against before/

Each command runs as `python -m diferida.cli` of this checkout (or of the
source tree given with --src) on 10^5 generated members (2% with bad values,
so the rejects and the duplicate ids across chunks are exercised), with
chunks of 20,000 rows; `census` reviews them against a second generated file
(another seed) as the prior year's. Files are compared byte for byte, except
the JSON summaries and sidecars, where the times taken (keys "seconds") are
left out, the folders' own paths, and workbooks' properties (the time they
were made).
Exits 1 when anything differs, naming each file.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
AS_OF = "2026-12-01"


def _without_times(value):
    if isinstance(value, dict):
        return {k: _without_times(v) for k, v in value.items()
                if k not in ("seconds", "generated_at", "created")}
    if isinstance(value, list):
        return [_without_times(v) for v in value]
    return value


def run_all(folder: Path, src: Path, rows: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    members = folder / "members.csv"
    if not members.exists():
        subprocess.run([sys.executable, str(HERE / "generate.py"), str(rows), "-o",
                        str(members), "--invalid", "0.02", "--seed", "7"], check=True)
    prior = folder / "prior.csv"
    if not prior.exists():
        subprocess.run([sys.executable, str(HERE / "generate.py"), str(rows), "-o",
                        str(prior), "--invalid", "0.02", "--seed", "8"], check=True)
    env = {**os.environ, "PYTHONPATH": str(src)}
    common = ["--as-of", AS_OF, "--chunk-rows", "20000", "--overwrite"]
    runs = {
        "batch-csv": ["batch", str(members), "-o", str(folder / "batch.csv"),
                      "--rejects", str(folder / "batch-rejects.csv"), "--json", *common],
        "batch-parquet": ["batch", str(members), "-o", str(folder / "batch.parquet"), "--json",
                          *common],
        "project": ["project", str(members), "-o", str(folder / "project.csv"),
                    "--rejects", str(folder / "project-rejects.csv"),
                    "--per-member", str(folder / "project-members.csv"),
                    "--discount", "0.04,0.0625", "--mortality", "none", "--lang", "en", "--json",
                    *common],
        "compare": ["compare", str(members), "--rules", "article19",
                    "--rules", "article19-strict-19_4", "-o", str(folder / "compare.csv"), "--json",
                    "--rejects", str(folder / "compare-rejects.csv"), *common],
        "compare-projected": ["compare", str(members), "--rules", "article19",
                              "--rules", "reform-19_2-age-67",
                              "-o", str(folder / "compare-projected.xlsx"),
                              "--discount", "0.04", "--mortality", "none", "--json", *common],
        "census": ["census", str(members), "--prior", str(prior),
                   "-o", str(folder / "census.xlsx"), "--html", str(folder / "census.html"),
                   "--rejects", str(folder / "census-rejects.csv"), "--json", *common],
    }
    for name, args in runs.items():
        proc = subprocess.run([sys.executable, "-m", "diferida.cli", *args], env=env,
                              capture_output=True, text=True)
        (folder / f"{name}.stdout").write_text(proc.stdout)
        (folder / f"{name}.status").write_text(f"{proc.returncode}\n")
        if proc.returncode != 0:
            print(f"{name}: exit {proc.returncode}\n{proc.stderr}", file=sys.stderr)


def _sheets(path: Path) -> dict[str, bytes]:
    folder = str(path.parent.resolve()).encode()
    with zipfile.ZipFile(path) as z:
        return {n: z.read(n).replace(folder, b"<folder>") for n in z.namelist()
                if not n.startswith("docProps/")}


def differences(a: Path, b: Path) -> list[str]:
    out = []
    names = sorted({p.name for p in a.iterdir()} | {p.name for p in b.iterdir()})
    for name in names:
        pa, pb = a / name, b / name
        if not pa.exists() or not pb.exists():
            out.append(f"{name}: only in {'before' if pa.exists() else 'after'}")
            continue
        # the folders' own names are left out too
        ba = pa.read_bytes().replace(str(a.resolve()).encode(), b"<folder>")
        bb = pb.read_bytes().replace(str(b.resolve()).encode(), b"<folder>")
        if name.endswith(".json") or name.endswith(".stdout"):
            try:
                ja, jb = json.loads(ba), json.loads(bb)
                if _without_times(ja) != _without_times(jb):
                    out.append(f"{name}: differs")
                continue
            except ValueError:
                if name.endswith(".stdout"):
                    continue  # a console summary: its times differ run to run
        if name.endswith(".xlsx"):  # the sheets, not the time the book was made
            if _sheets(pa) != _sheets(pb):
                out.append(f"{name}: differs")
            continue
        if ba != bb:
            out.append(f"{name}: differs")
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--save", type=Path, required=True, help="folder for this tree's outputs")
    p.add_argument("--against", type=Path, help="folder of outputs to compare with")
    p.add_argument("--src", type=Path, default=HERE.parent / "src")
    p.add_argument("--rows", type=int, default=100_000)
    a = p.parse_args()
    run_all(a.save, a.src.resolve(), a.rows)
    if a.against is not None:
        found = differences(a.against, a.save)
        for line in found:
            print(line)
        print(f"{len(found)} files differ" if found else "every output is the same")
        sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
