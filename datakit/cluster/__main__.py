"""``python -m datakit.cluster dispatcher|worker ...``: see :mod:`datakit.cluster.serve`."""

from datakit.cluster.serve import main
from datakit.tensorflow_logs import import_tensorflow_lean

__all__: list[str] = []

if __name__ == "__main__":
    import_tensorflow_lean()  # a server runs dataset graphs only
    main()
