"""Which GPUs each instance of a UDF with ``gpus=`` sees on the native runner.

Instance ``k`` of a UDF asking ``g`` GPUs per instance gets its own slice of the GPUs visible to
the engine (``CUDA_VISIBLE_DEVICES`` when set, else every GPU ``nvidia-smi -L`` lists), as Ray
does for actors: ``g >= 1`` → GPUs ``[k*ceil(g), (k+1)*ceil(g))``; ``g < 1`` → ``floor(1/g)``
instances share one GPU (``g=0.5``: instances 0 and 1 on the first GPU, 2 and 3 on the second).
The worker process of instance ``k`` starts with ``CUDA_VISIBLE_DEVICES`` set to its slice, so a
framework inside it (PyTorch, JAX, ONNX Runtime) sees only those GPUs, numbered from 0."""

from __future__ import annotations

import math
import os
import subprocess


def visible_gpus() -> list[str]:
    """The GPU ids this process may use, in CUDA_VISIBLE_DEVICES order (strings: indices or UUIDs)."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        ids = []
        for device in visible.split(","):
            device = device.strip()
            if not device or device.startswith("-"):
                break  # CUDA ignores everything from the first empty or negative entry on
            ids.append(device)
        return ids
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return []
    listed = [line for line in out.stdout.splitlines() if line.startswith("GPU ")]
    return [str(i) for i in range(len(listed))]


def devices_for(slot: int, gpus_per_instance: float, visible: list[str]) -> list[str]:
    """The GPUs of instance ``slot`` (0-based) when each instance asks ``gpus_per_instance``.
    Raises ValueError when ``visible`` has too few GPUs for that slot."""
    if gpus_per_instance <= 0:
        return []
    if gpus_per_instance >= 1:
        width = math.ceil(gpus_per_instance)
        chosen = visible[slot * width : (slot + 1) * width]
        if len(chosen) < width:
            raise ValueError(
                f"instance {slot} needs GPUs {slot * width}..{(slot + 1) * width - 1} but only "
                f"{len(visible)} are visible"
            )
        return chosen
    per_gpu = max(1, math.floor(1 / gpus_per_instance + 1e-9))
    index = slot // per_gpu
    if index >= len(visible):
        raise ValueError(f"instance {slot} needs GPU {index} but only {len(visible)} are visible")
    return [visible[index]]
