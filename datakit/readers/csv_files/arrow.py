"""CSV blocks parsed by pyarrow's C++ reader, handed to ``tf.data`` as whole column blocks.

TensorFlow's ``decode_csv`` pays for every field of every row, and tops out
well below pyarrow's CSV reader, which parses in C++ without holding the GIL
(notebook 13 measures both). ``csv_reader_dataset(parse="arrow")`` reads each
file in blocks of :data:`BLOCK_LINES` lines (byte ranges found by one scan of
the file when the dataset is built), parses a block with one Python call
(``tf.numpy_function``, declared stateless, so iterators can still be
checkpointed; numbers come out of Arrow's buffers without a copy), applies the
reader's standardization and lookups to the whole block (for the ``"matrix"``
output in NumPy inside the same call, so it hands TensorFlow the block's ``x``
and ``y`` only: :mod:`~datakit.readers.csv_files.block_features`), and shuffles blocks
through the same row buffer as ``parse="chunk"``
(:func:`~datakit.readers.tables.chunk_buffer.shuffle_chunks`, through the tables'
one reading tail), a block at a time: the rows of every other mode, exactly once
per epoch, in another order. The interleave orders the blocks' descriptions
only; one parallel map after it parses them, so the parses run ahead across
file boundaries and no Python runs per batch.
Unshuffled (one reader), they come in file order, equal to ``parse="batch"``'s
bit for bit (``tests/test_arrow.py``).

A bad line is judged by the reader's own rule (its regular expression), not
pyarrow's, so every mode agrees on what is bad and says it the same way:
when pyarrow fails on a block, when a block holds fewer or more rows than
lines (an unterminated quote swallows the lines after it), when a label is
empty or not one of its classes, or when a line holds a quote or a tab
(which pyarrow accepts in places the kit does not), the block's lines are
checked with the rule and the first bad one is raised as a
:class:`~datakit.readers.csv_files.grammar.BadLine` (an ``InvalidArgumentError``
while iterating), with its file and line number.

What it cannot do: the parse is a Python function, so a dataset using it
cannot run on tf.data service workers (they run the dataset graph without a
Python interpreter) and cannot be serialized into a graph for another process.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NoReturn, SupportsInt

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import tensorflow as tf

from datakit.core.exit_guard import release_iterators_at_exit
from datakit.core.file_facts import Stamp, file_facts, stamp, what_changed
from datakit.readers.csv_files.block_features import BlockFeatures
from datakit.readers.csv_files.dialect import COMMA, Dialect, dialect_of
from datakit.readers.csv_files.file_checks import is_blank
from datakit.readers.csv_files.grammar import BadLine, describe_bad_line, row_pattern
from datakit.readers.csv_files.line_decoding import LINES_PER_CHUNK
from datakit.readers.tables.block_reading import blocks_dataset
from datakit.readers.tables.graph_functions import as_written
from datakit.readers.tables.table_stats import NUMBER

__all__ = ["BLOCK_LINES", "SERVICE_HINT"]

#: Lines parsed by one call, and the rows a block moves through the shuffle buffer at once
#: (8 of ``parse="chunk"``'s chunks; about 0.6 MB of the benchmark's rows).
BLOCK_LINES = 8 * LINES_PER_CHUNK
#: The parse op's name: in TensorFlow's error on a tf.data service worker (which has no
#: Python function to call), it says why.
SERVICE_HINT = "arrow_parse_block_runs_python_so_not_on_tf_data_service_workers"
#: Bytes after which the kit's rule checks each line, as pyarrow accepts them where it does not.
_SUSPECT = (b'"', b"\t")


def block_ranges(path: str, block_lines: int = BLOCK_LINES, header_lines: int = 1) -> np.ndarray:
    """``[start byte, end byte, first line number, lines]`` per block of ``path``'s data lines.

    One scan of the file for its newlines (NumPy, a few ms per MB). Line 1 is
    the header (``header_lines=0``: a file without one); block ``k`` starts at
    line ``header_lines + 1 + k * block_lines``.

    >>> import tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "a.csv")
    >>> _ = open(p, "w").write("x\\n1\\n2\\n3\\n")
    >>> block_ranges(p, 2).tolist()
    [[2, 6, 2, 2], [6, 8, 4, 1]]
    """
    if block_lines % LINES_PER_CHUNK and block_lines > LINES_PER_CHUNK:
        raise ValueError(f"block_lines={block_lines}: pass a multiple of {LINES_PER_CHUNK}")
    with open(path, "rb") as f:
        data = f.read()
    ends = np.flatnonzero(np.frombuffer(data, np.uint8) == 10) + 1  # one past each newline
    if len(data) and data[-1:] != b"\n":
        ends = np.append(ends, len(data))  # a last line without a newline
    starts = np.concatenate([[0], ends[:-1]])[header_lines:]  # data lines: after the header
    ends = ends[header_lines:]
    firsts = np.arange(0, len(starts), block_lines)
    ranges = [[starts[k], ends[min(k + block_lines, len(starts)) - 1], header_lines + 1 + k,
               min(block_lines, len(starts) - k)] for k in firsts]
    return np.array(ranges, np.int64).reshape(-1, 4)


class BlockParser:
    """The Python call that parses one block: ``(path, start, end, first, lines)`` -> columns.

    Returns, for each of ``keep`` (numbers as float32, a missing number filled
    with ``fill[c]``; text as bytes), one array of the block's rows; with
    ``features``, the block's ``[x, y]`` it computes from them instead
    (:class:`~datakit.readers.csv_files.block_features.BlockFeatures`). ``sizes``: each file's
    :func:`~datakit.core.file_facts.stamp` when checked (a changed file is an error,
    checked on the open file at each block); ``skip``: line numbers to drop
    per file; ``blank``: files that hold blank lines.
    """

    def __init__(self, header: Sequence[str], kinds: dict[str, str], keep: Sequence[str], *,
                 label: str | None, classes: dict[str, list[str]], fill: dict[str, np.float32],
                 sizes: dict[str, Stamp], skip: dict[str, set[int]] | None = None,
                 blank: Iterable[str] = (), dialect: Dialect = COMMA,
                 features: BlockFeatures | None = None) -> None:
        self.header, self.kinds, self.keep, self.label = list(header), kinds, list(keep), label
        self.classes, self.fill, self.sizes = classes, fill, sizes
        self.skip, self.blank = skip or {}, set(blank)
        self.required = set() if label is None else {label}  # None: rows for prediction
        self.dialect, self.features = dialect, features
        self.ignored = set(self.header) - set(self.keep)
        self.rule = re.compile(row_pattern(self.header, kinds, self.required, classes,
                                           dialect=dialect, ignored=self.ignored))
        self.read = pacsv.ReadOptions(column_names=self.header, use_threads=False,
                                      block_size=1 << 26)
        self.parse = pacsv.ParseOptions(delimiter=dialect.delimiter)
        self.convert = pacsv.ConvertOptions(
            column_types={c: pa.float32() if kinds[c] == NUMBER else pa.string() for c in keep},
            include_columns=self.keep, null_values=["", *dialect.na_values],
            strings_can_be_null=False,
            quoted_strings_can_be_null=False)
        self.label_set = pa.array(classes[label]) if label in classes else None

    def dtypes(self) -> list:
        if self.features is not None:
            return self.features.dtypes()
        return [tf.float32 if self.kinds[c] == NUMBER else tf.string for c in self.keep]

    def __call__(self, raw_path: bytes, start: SupportsInt, end: SupportsInt, first: SupportsInt,
                 lines: SupportsInt) -> Any:
        path = raw_path.decode()
        start, end, first, lines = int(start), int(end), int(first), int(lines)
        data = self._read(path, start, end)
        numbers = range(first, first + lines)
        dropped = self.skip.get(path, ())
        if path in self.blank or (dropped and any(n in dropped for n in numbers)):
            raw = data.split(b"\n")[:lines]
            kept = [not is_blank(r) and n not in dropped for r, n in zip(raw, numbers,
                                                                            strict=True)]
            data = b"\n".join(r for r, k in zip(raw, kept, strict=True) if k) + b"\n"
        else:
            kept = None
        rows = lines if kept is None else sum(kept)
        try:
            table = pacsv.read_csv(pa.py_buffer(data), read_options=self.read,
                                   parse_options=self.parse,
                                   convert_options=self.convert) if rows else None
        except pa.ArrowInvalid as e:
            self._locate(path, data, first, lines, kept, str(e))
        if table is not None and (table.num_rows != rows or self._suspect(data)  # None: no row
                                  or self._bad_label(table)):
            self._locate(path, data, first, lines, kept, "")
        if self.features is not None:
            return self.features({c: self._column(table, c, rows, words=True)
                                  for c in self.keep})
        return [self._column(table, c, rows) for c in self.keep]

    def _read(self, path: str, start: int, end: int) -> bytes:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())  # the open file's own: a file replaced is found too
            f.seek(max(start - 1, 0))
            data = f.read(end - start + (start > 0))
        size, was = st.st_size, self.sizes[path]
        ok = stamp(st) == was and (start == 0 or data[:1] == b"\n")
        if not ok or not (data.endswith(b"\n") or end == size):
            raise ValueError(f"CSV file changed after it was checked: {path} now has {size} "
                             f"bytes; when checked it had {was[0]}"
                             f"{f' ({what_changed(stamp(st), was)})' * (size == was[0])}"
                             ". One epoch would mix old and new rows: build the dataset again "
                             "after files change, and never change files while they are read.")
        return data[1:] if start > 0 else data.removeprefix(b"\xef\xbb\xbf")  # not text

    def _suspect(self, data: bytes) -> bool:
        """Whether a quote or tab makes a line pyarrow read possibly one the rule rejects."""
        if not any(s in data for s in _SUSPECT):
            return False
        return any(any(s in r for s in _SUSPECT) and not self.rule.fullmatch(
            r.rstrip(b"\r").decode("utf-8", "replace")) for r in data.split(b"\n") if r)

    def _bad_label(self, table: pa.Table) -> bool:
        if self.label is None:
            return False
        y = table.column(self.label)
        if y.null_count or (pa.types.is_floating(y.type)  # inf and nan: refused as the rule does
                            and not pc.all(pc.is_finite(y)).as_py()):
            return True
        return self.label_set is not None and not pc.all(pc.is_in(y, self.label_set)).as_py()

    def _column(self, table: pa.Table, c: str, rows: int, *, words: bool = False) -> Any:
        """Column ``c`` as NumPy: numbers zero-copy from Arrow's buffer (unless a missing one
        is filled), text as Python strings (``words``, for ``features``: a missing number
        left NaN, and text as its distinct words and each row's index into them)."""
        if self.kinds[c] == NUMBER:
            if not rows:
                return np.zeros(0, np.float32)
            col = table.column(c)
            if col.null_count and not words:  # words: NaN, which the features fill themselves
                col = col.fill_null(pa.scalar(self.fill[c], pa.float32()))
            return col.to_numpy().astype(np.float32, copy=False)
        if not rows:
            return ([], np.zeros(0, np.int64)) if words else np.zeros(0, object)
        # A text column holds few distinct values (classes, categories): one Python string
        # per distinct value, repeated by index, rather than one per row.
        encoded = table.column(c).combine_chunks().dictionary_encode()
        distinct, index = encoded.dictionary.to_pylist(), encoded.indices.to_numpy()
        return (distinct, index) if words else np.array(distinct, object)[index]

    def _locate(self, path: str, data: bytes, first: int, lines: int, kept: list[bool] | None,
                why: str) -> NoReturn:
        """Raise the first bad line of the block, by the reader's rule."""
        text = data.split(b"\n")
        numbers: Sequence[int] = range(first, first + lines)
        if kept is not None:
            numbers = [n for n, k in zip(numbers, kept, strict=True) if k]
        for n, r in zip(numbers, text, strict=False):
            line = r.rstrip(b"\r").decode("utf-8", "replace")
            if is_blank(line):
                continue
            # (a line the rule accepts may still hold a label beyond float32: describe it)
            found = describe_bad_line(line, self.header, self.kinds, self.required,
                                      self.classes, ignored=self.ignored, dialect=self.dialect)
            if found is None and self.rule.fullmatch(line):
                continue
            column, reason = found or (None, "bad line")
            raise ValueError(str(BadLine(path, n, column, reason, line)))
        raise ValueError(f"{path}, lines {first}-{first + lines - 1}: pyarrow could not read "
                         f"this block ({why or 'rows and lines disagree'}) though every line "
                         "follows the kit's rule; read it with parse='chunk'.")


def block_parse(parser: BlockParser,
                to_element: Callable[[dict], Any]) -> Callable[..., Any]:
    """``(path, start, end, first, lines) -> element``: one ``parser`` call, shaped by
    ``to_element`` (``{column: tensor}`` of a block -> the reader's element: standardized,
    looked up), or, when the parser computes the features itself (its ``features``), the
    call's ``x`` and ``y`` as they come."""
    dtypes, features = parser.dtypes(), parser.features
    release_iterators_at_exit()  # blocks are parsed in Python: no hang at exit

    @as_written
    def parse(path: tf.Tensor, start: tf.Tensor, end: tf.Tensor, first: tf.Tensor,
              lines: tf.Tensor) -> Any:
        out = tf.numpy_function(parser, [path, start, end, first, lines], dtypes,
                                stateful=False, name=SERVICE_HINT)
        if features is not None:
            for t, shape in zip(out, features.shapes(), strict=True):
                t.set_shape(shape)
            return tuple(out) if len(out) > 1 else out[0]
        for t in out:
            t.set_shape([None])
        return to_element(dict(zip(parser.keep, out, strict=True)))

    return parse


def block_plan(path: tf.Tensor, ranges: Sequence[tf.Tensor]) -> tf.data.Dataset:
    """``(path, start, end, first, lines)`` of each block of one file: descriptions, no parse."""
    starts = ranges[0]
    return tf.data.Dataset.from_tensor_slices((tf.fill(tf.shape(starts), path), *ranges))


def _ranges_by_file(files: list[str], header_lines: int = 1
                    ) -> Callable[[tf.Tensor], tuple[tf.Tensor, ...]]:
    """``path -> (starts, ends, firsts, lines)`` of its blocks, as a function of a path tensor."""
    ranges = [block_ranges(f, header_lines=header_lines) for f in files]
    table = tf.ragged.constant([r.tolist() for r in ranges], dtype=tf.int64, ragged_rank=1,
                               inner_shape=(4,))
    index = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
        tf.constant(files), tf.range(len(files), dtype=tf.int64)), default_value=-1)

    def ranges_of(path: tf.Tensor) -> tuple[tf.Tensor, ...]:
        r = table[index.lookup(path)]
        return r[:, 0], r[:, 1], r[:, 2], r[:, 3]

    return ranges_of


# The reader's options (ReadOptions) and parts (ReaderParts) are Any in the signatures below:
# options.py and modes.py sit above this module (the registry imports it for parse="arrow"),
# and the kit has no import cycle, not even one for the type checker.


def block_features(kinds: dict, opts: Any) -> BlockFeatures | None:
    """The reader's ``(x, y)`` computed in the parse call, for the ``"matrix"`` output;
    ``None`` for ``"dict"`` (its text columns stay strings, looked up in the graph)."""
    if opts.output != "matrix":
        return None
    stats, features = opts.stats, opts.features
    text = [c for c in features if kinds[c] != NUMBER]
    return BlockFeatures(features, kinds, mean={c: stats[c].mean for c in features},
                         std={c: stats[c].std for c in features},
                         vocabularies={c: list(stats[c].vocabulary or {}) for c in text},
                         label=opts.label, classes=opts.classes,
                         label_scale=opts.label_scale)


def block_reading(parts: Any, opts: Any, *, fused: bool = True
                  ) -> tuple[Callable[[tf.Tensor], tf.data.Dataset], Callable[..., Any]]:
    """``(plan_of, parse)``: ``plan_of(path)``, the descriptions of a file's blocks
    (:func:`block_plan`), and ``parse``, one description -> the reader's element.

    From the reader's parts for the checked files
    (:class:`~datakit.readers.csv_files.modes.ReaderParts`) and its options.
    ``fused``: the ``"matrix"`` output's ``(x, y)`` computed in the parse call
    (:func:`block_features`); false: one tensor per column from the call, standardized
    and looked up in the graph (``parts.to_features``), as before issue 49's second step.
    """
    stats, label = opts.stats, opts.label
    keep = opts.features + ([] if label is None else [label])  # label=None: never read it
    fill = {c: np.float32(stats[c].mean) for c in opts.features if parts.kinds[c] == NUMBER}
    skip: dict[str, set[int]] = {}
    for b in parts.bad:
        skip.setdefault(b.file, set()).add(b.line)
    parser = BlockParser(parts.columns, parts.kinds, [c for c in stats.columns if c in keep],
                         label=label,
                         classes=opts.classes, fill=fill,
                         sizes=file_facts(parts.files), skip=skip,
                         blank=parts.blank, dialect=dialect_of(stats),
                         features=block_features(parts.kinds, opts) if fused else None)
    ranges_of = _ranges_by_file(list(parts.files), dialect_of(stats).header_lines)
    plan_of = as_written(lambda path: block_plan(path, ranges_of(path)))
    return plan_of, block_parse(parser, parts.to_features)


def arrow_batches(files: list[str], parts: Any, opts: Any) -> tf.data.Dataset:
    """``parse="arrow"``: each reader's blocks parsed by pyarrow, shuffled a block at a time.

    The reader's registry calls it with the checked files, the reader's parts
    for them (:class:`~datakit.readers.csv_files.modes.ReaderParts`) and its
    options; the tables' one reading tail
    (:func:`~datakit.readers.tables.block_reading.blocks_dataset`) does the rest:
    its interleave orders the blocks' descriptions, and one parallel map after it
    parses them, so parses run ahead across file boundaries. (A parse map per file,
    inside the interleave, started a file's first parse only when the interleave
    reached the file: a whole parse's stall per file, most of the time lost at
    batch 1024; ``benchmarks/profile_reader.py`` measures both.)
    """
    plan_of, parse = block_reading(parts, opts)
    return blocks_dataset(files, plan_of, opts, parts.rows, cache=parts.cached, parse=parse,
                          parse_calls=opts.n_parse_threads)
