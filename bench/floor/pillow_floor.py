"""CPU per file of thumbor's imaging path, one thread, no HTTP: Pillow's draft decode (the largest
1/8..1/1 scale that still covers the output), a Lanczos resize to 300 px wide, a q80 JPEG save."""
import io
import sys
import time

from PIL import Image

REPS = 10
total = 0.0
print("| file | Pillow draft + resize + save ms |\n|---|---|")
for path in sys.argv[1:]:
    data = open(path, "rb").read()
    start = time.process_time()
    for _ in range(REPS):
        image = Image.open(io.BytesIO(data))
        height = round(image.height * 300 / image.width)
        image.draft("RGB", (300, height))
        image = image.convert("RGB").resize((300, height), Image.LANCZOS)
        image.save(io.BytesIO(), "JPEG", quality=80)
    elapsed = (time.process_time() - start) * 1000 / REPS
    total += elapsed
    print(f"| {path.rsplit('/', 1)[-1]} | {elapsed:.2f} |")
if len(sys.argv) > 1:
    print(f"| **mean** | **{total / (len(sys.argv) - 1):.2f}** |")
