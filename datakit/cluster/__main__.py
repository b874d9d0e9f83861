"""``python -m datakit.cluster dispatcher|worker ...``: see :mod:`datakit.cluster.serve`."""

from datakit.cluster.serve import main, skip_keras

__all__: list[str] = []

if __name__ == "__main__":
    skip_keras()  # a server runs dataset graphs only: TensorFlow without Keras starts faster
    main()
