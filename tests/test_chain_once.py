"""The doctor reads a pipeline's chain once: diagnose, its advice and its memory report share it.

Every module of the doctor that reads a chain has its ``chain_of`` replaced by a counting
one; a diagnosis (with advice and the memory report), a memory report and a memory advice
each read the chain of the pipeline they were given exactly once.
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

