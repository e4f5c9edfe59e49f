"""What a train job gets when nothing is chosen: its method, by the machine it runs on (the form,
the API and `train_parser` ask here)."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings


def gpu_present() -> bool:
    """Whether this machine has a GPU to train on, without importing torch (the web process has
    none): NSM_PARSER_DEVICE names CUDA, or the NVIDIA driver lists a GPU."""
    if settings.NSM_PARSER_DEVICE.startswith("cuda"):
        return True
    gpus = Path("/proc/driver/nvidia/gpus")
    return gpus.is_dir() and any(gpus.iterdir())


def default_train_method(base_model: str = "") -> str:
    """The method a train job gets when none is chosen: lora over a base model given with it (as
    the command line and the API take it), else NSM_TRAIN_METHOD, else lora on a machine with a
    GPU and the classifier elsewhere (a LoRA over a real model takes hours on a CPU; the
    classifier, seconds)."""
    if base_model:
        return "lora"
    return settings.NSM_TRAIN_METHOD or ("lora" if gpu_present() else "classifier")
