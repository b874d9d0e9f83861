"""The doctor reads a pipeline's chain once: diagnose, its advice and its memory report share it.

Every module of the doctor that reads a chain has its ``chain_of`` replaced by a counting
one; a diagnosis (with advice and the memory report), a memory report and a memory advice
each read the chain of the pipeline they were given exactly once. Each stage is read once
too, into a ``StageFacts`` record: no module of the doctor imports a per-stage helper of
``perf.chain`` (checked on their code).
"""

import importlib

import pytest
import tensorflow as tf

from datakit.doctor import advice, diagnosis, memory_use
from datakit.perf import chain as chain_module

# the package face's memory_advice is the function: the module, by its full name
memory_advice = importlib.import_module("datakit.doctor.memory_advice")


@pytest.fixture
def reads(monkeypatch):
    """The datasets whose chain was read, in order."""
    seen = []

    def counting(dataset):
        seen.append(dataset)
        return chain_module.chain_of(dataset)

    for module in (diagnosis, advice, memory_use, memory_advice):
        if hasattr(module, "chain_of"):
            monkeypatch.setattr(module, "chain_of", counting)
    return seen


def pipeline():
    return tf.data.Dataset.range(200).map(lambda i: tf.fill([1000], i), name="fill") \
        .shuffle(20, seed=1).batch(4)


@pytest.mark.timeout(300)
def test_a_diagnosis_reads_the_chain_once(reads):
    ds = pipeline()
    report = diagnosis.diagnose(ds, seconds=0.05, repeats=1, advise=True, memory=True)
    assert report.advice and report.memory_report is not None
    assert reads == [ds]


@pytest.mark.timeout(120)
def test_a_memory_report_reads_the_chain_once(reads):
    ds = pipeline()
    memory_use.memory_report(ds, seconds=0.2)
    assert reads == [ds]


@pytest.mark.timeout(300)
def test_a_memory_advice_reads_the_chain_of_its_pipeline_once(reads):
    ds = pipeline()
    report = memory_use.memory_report(ds, seconds=0.2)
    reads.clear()
    out = memory_advice.memory_advice(report, ds, seconds=0.2)
    assert out
    # each changed copy is a pipeline of its own, with its own chain; the original's: once
    assert sum(d is ds for d in reads) == 1



#: What the doctor may take from perf.chain: the chain, the record builder and the record.
#: Every other helper there reads one stage; the doctor asks the stage's record instead.
DOCTOR_MAY_IMPORT = {"chain_of", "stage_facts", "StageFacts"}


def _chain_imports(path):
    """``(line, what)`` for each name ``path`` takes from datakit.perf.chain (its code, not
    its docstrings' examples); a whole-module import is one entry, as it reaches every helper."""
    import ast

    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module == "datakit.perf.chain":
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module == "datakit.perf":
            found += [(node.lineno, "the module") for a in node.names if a.name == "chain"]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, "the module") for a in node.names
                      if a.name == "datakit.perf.chain"]
    return found


def test_the_doctor_reads_stages_from_their_records_only():
    from pathlib import Path

    doctor = Path(diagnosis.__file__).parent
    taken = {p.name: _chain_imports(p) for p in sorted(doctor.glob("*.py"))}
    wrong = [f"datakit/doctor/{name}:{line} takes {what} from perf.chain"
             for name, found in taken.items() for line, what in found
             if what not in DOCTOR_MAY_IMPORT]
    assert not wrong, ("the doctor reads each stage once into a StageFacts record "
                       "(perf.chain.stage_facts) and asks its fields; add a field there "
                       "rather than calling a per-stage helper:\n" + "\n".join(wrong))
    # the scan sees the doctor's real imports (an empty scan would pass anything)
    assert {"chain_of", "stage_facts"} <= {w for found in taken.values() for _, w in found}
