"""thumbor's PIL engine with one approximation taken out: the source is decoded whole before any step.

Stock thumbor asks Pillow for a draft of a JPEG before its resize (`Image.draft`: libjpeg's DCT scaling to
1/2..1/8 of the source, chosen so the result is still at least the target size), then resizes that with
Lanczos. The draft's pixels are averages of 8x8 blocks rather than a filtered reduce, so thumbor's small
outputs sit 0.91-0.95 SSIM from an exact Lanczos reduce of the whole image, and ImageProxy's cannot be nearer
to them than that. With this engine (thumbor.conf: ENGINE = 'whole_decode_engine') thumbor does every other
step exactly as it ships: the differential compares ImageProxy's pixels with it, and sizes and formats with
stock thumbor (scripts/dialects/thumbor_differential.py).
"""
from thumbor.engines.pil import Engine as PillowEngine


class Engine(PillowEngine):
    """Pillow's engine, loading every image in full as it is opened, so that a later draft() has no effect."""

    def create_image(self, buffer):
        image = super().create_image(buffer)
        if image is not None and not isinstance(image, list):
            image.load()
        return image
