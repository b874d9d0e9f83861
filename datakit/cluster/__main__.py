"""``python -m datakit.cluster dispatcher|worker ...``: see :mod:`datakit.cluster.serve`."""

from datakit.cluster.serve import serve_lean

__all__: list[str] = []

if __name__ == "__main__":
    serve_lean()  # TensorFlow without what a server never uses, once the arguments pass
