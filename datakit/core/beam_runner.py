"""Apache Beam's local runner as the kit runs it: the DirectRunner's flags, and notebooks.

Two helpers run a Beam pipeline: tf.Transform's full pass
(:func:`~datakit.readers.tf_transform.transform.run_transform`) and the video
converter (:func:`~datakit.readers.video.converter.convert_beam.write_video_shards_beam`).
Both take Beam's flags (``pipeline_args``), and by default run on this machine with
the flags of :func:`direct_runner_args`: one worker in memory, or ``workers``
workers, processes or threads as the work wants (a worker that holds the GIL, as
tf.Transform's analyzers do, needs processes; one that decodes and encodes with
the GIL released, as the converter does, is faster in threads).
:func:`no_interactive_labels` lets either build its pipeline in a notebook.

>>> direct_runner_args(1, processes=True)
['--runner=DirectRunner', '--direct_running_mode=in_memory']
>>> direct_runner_args(2, processes=False)
['--runner=DirectRunner', '--direct_running_mode=multi_threading', '--direct_num_workers=2']
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from datakit.core.arguments import check_count

__all__ = ["direct_runner_args", "no_interactive_labels"]


def direct_runner_args(workers: int, *, processes: bool) -> list[str]:
    """The DirectRunner's flags for ``workers`` workers on this machine (1: in this process,
    in memory), each a process (``processes=True``) or a thread."""
    what = "processes" if processes else "threads"
    check_count("workers", workers, fix=f"pass an int >= 1 ({what} of the DirectRunner)")
    if workers == 1:
        return ["--runner=DirectRunner", "--direct_running_mode=in_memory"]
    mode = "multi_processing" if processes else "multi_threading"
    return ["--runner=DirectRunner", f"--direct_running_mode={mode}",
            f"--direct_num_workers={workers}"]


@contextlib.contextmanager
def no_interactive_labels() -> Iterator[None]:
    """Build Beam pipelines in a notebook with pandas 3: Beam's IPython relabelling off.

    Under IPython, Beam 2.77 prefixes each top-level transform's label with the cell
    number, and to do so imports ``apache_beam.dataframe``, which fails with pandas 3
    (``AttributeError: type object 'DataFrame' has no attribute 'first'``: pandas 3
    removed it). Inside this block Beam sees no IPython while it labels transforms.
    """
    from apache_beam.utils import interactive_utils

    original = interactive_utils.is_in_ipython
    interactive_utils.is_in_ipython = lambda: False
    try:
        yield
    finally:
        interactive_utils.is_in_ipython = original
