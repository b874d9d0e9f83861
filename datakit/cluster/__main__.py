"""``python -m datakit.cluster dispatcher|worker ...``: see :mod:`datakit.cluster.serve`."""

from datakit.cluster.serve import main

__all__: list[str] = []

if __name__ == "__main__":
    main(lean=True)  # TensorFlow without what a server never uses, once the arguments pass
