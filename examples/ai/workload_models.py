"""The models of the four AI workloads as engine-neutral classes (no engine import): each is a
stateful batch callable (``__init__`` loads the model once; ``__call__`` takes a batch column with
``to_pylist()`` and returns one value per row). Ketch, Daft and Ray Data wrap the same classes, so
the compute per row is the same in every engine of the benchmark."""

from __future__ import annotations

from typing import Any

import numpy as np

MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)
SAMPLE_RATE = 16_000
PER_FRAME = 2  # detections kept per frame (the most confident)


class ResNetClassifier:
    """One model per instance; a batch of 224x224 RGB images in, one label per image out."""

    def __init__(self, model_dir: str) -> None:
        from transformers import ResNetForImageClassification

        self.model = ResNetForImageClassification.from_pretrained(model_dir).eval()
        self.labels = self.model.config.id2label

    def __call__(self, images: Any) -> list[str]:
        import torch

        batch = np.stack(images.to_pylist()).astype(np.float32) / 255.0  # (N, 224, 224, 3)
        batch = ((batch - MEAN) / STD).transpose(0, 3, 1, 2)
        with torch.inference_mode():
            logits = self.model(torch.from_numpy(np.ascontiguousarray(batch))).logits
        return [self.labels[int(i)] for i in logits.argmax(dim=1)]


class FeatureExtractor:
    """Whisper's log-mel features (80 x 3000 float32 per clip) of 16 kHz samples."""

    def __init__(self, model_dir: str) -> None:
        from transformers import WhisperFeatureExtractor

        self.extractor = WhisperFeatureExtractor.from_pretrained(model_dir)

    def __call__(self, samples: Any) -> list[np.ndarray]:
        audio = [np.asarray(s, dtype=np.float32) for s in samples.to_pylist()]
        return list(self.extractor(audio, sampling_rate=SAMPLE_RATE, return_tensors="np").input_features)


class Transcriber:
    """Whisper generate (greedy, up to 16 tokens) on a batch of features: token ids per clip."""

    def __init__(self, model_dir: str) -> None:
        from transformers import WhisperForConditionalGeneration

        self.model = WhisperForConditionalGeneration.from_pretrained(model_dir).eval()

    def __call__(self, features: Any) -> list[list[int]]:
        import torch

        batch = torch.from_numpy(np.stack([np.asarray(f, dtype=np.float32) for f in features.to_pylist()]))
        with torch.inference_mode():
            ids = self.model.generate(batch, max_new_tokens=16)
        return ids.cpu().numpy().astype(np.int32).tolist()


class Decoder:
    def __init__(self, model_dir: str) -> None:
        from transformers import AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(model_dir)

    def __call__(self, token_ids: Any) -> list[str]:
        return self.tokenizer.batch_decode(token_ids.to_pylist(), skip_special_tokens=True)


class Detector:
    """Boxes as [x, y, width, height] in the frame's pixels (clipped to it, at least 1x1)."""

    def __init__(self, model_dir: str) -> None:
        from transformers import AutoImageProcessor, YolosForObjectDetection

        self.model = YolosForObjectDetection.from_pretrained(model_dir).eval()
        self.processor = AutoImageProcessor.from_pretrained(model_dir)
        self.labels = self.model.config.id2label

    def __call__(self, frames: Any) -> list[list[dict[str, Any]]]:
        import torch

        images = [np.asarray(f) for f in frames.to_pylist()]
        inputs = self.processor(images=images, return_tensors="pt")
        with torch.inference_mode():
            outputs = self.model(**inputs)
        sizes = [(img.shape[0], img.shape[1]) for img in images]
        results = self.processor.post_process_object_detection(outputs, threshold=0.0, target_sizes=sizes)
        out = []
        for (height, width), result in zip(sizes, results, strict=True):
            order = torch.argsort(result["scores"], descending=True)[:PER_FRAME]
            objects = []
            for k in order.tolist():
                x0, y0, x1, y1 = (float(v) for v in result["boxes"][k])
                x = int(min(max(x0, 0), width - 1))
                y = int(min(max(y0, 0), height - 1))
                w = max(1, int(min(x1, width)) - x)
                h = max(1, int(min(y1, height)) - y)
                objects.append({"label": self.labels[int(result["labels"][k])],
                                "confidence": float(result["scores"][k]), "bbox": [x, y, w, h]})  # fmt: skip
            out.append(objects)
        return out
