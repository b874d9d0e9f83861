import os

# Before anything imports TensorFlow (datakit sets the same defaults).
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
# Notebook kernels (nbval) inherit this environment: let them draw with the
# inline backend, as in JupyterLab, whatever the caller's MPLBACKEND says.
os.environ.pop("MPLBACKEND", None)

collect_ignore = ["run_notebooks.py"]
