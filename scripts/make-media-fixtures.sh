#!/usr/bin/env bash
# Regenerates Tests/BubbleImportTests/Fixtures/media (committed; a few KB each). Needs tools the
# bootstrap does not install, since the tests only read the files:
#   apt-get install imagemagick ffmpeg webp libheif-examples
set -euo pipefail
out="$(cd "$(dirname "$0")/.." && pwd)/Tests/BubbleImportTests/Fixtures/media"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; cd "$work"
# A 40×60 portrait picture as displayed: red, green / blue, yellow quadrants.
convert -size 20x30 xc:red -size 20x30 xc:lime +append top.png
convert -size 20x30 xc:blue -size 20x30 xc:yellow +append bottom.png
convert top.png bottom.png -append displayed.png
# JPEGs whose EXIF orientation 1–8 turns the stored pixels back into that picture; a corrupt one.
python3 - "$out" <<'PY'
import random, struct, subprocess, sys
out = sys.argv[1]
inverse = {1: [], 2: ["-flop"], 3: ["-rotate", "180"], 4: ["-flip"], 5: ["-transpose"], 6: ["-rotate", "270"],
           7: ["-transverse"], 8: ["-rotate", "90"]}
for o, ops in inverse.items():
    subprocess.run(["convert", "displayed.png", *ops, "-strip", "-quality", "95", "stored.jpg"], check=True)
    d = open("stored.jpg", "rb").read()
    tiff = b"MM\x00\x2a" + struct.pack(">IH", 8, 1) + struct.pack(">HHI", 0x0112, 3, 1) + struct.pack(">HHI", o, 0, 0)
    body = b"Exif\x00\x00" + tiff
    open(f"{out}/orientation-{o}.jpg", "wb").write(d[:2] + b"\xff\xe1" + struct.pack(">H", len(body) + 2) + body + d[2:])
random.seed(7)
open(f"{out}/corrupt.jpg", "wb").write(open(f"{out}/orientation-1.jpg", "rb").read()[:2] + bytes(random.randrange(256) for _ in range(400)))
# AMR-NB: 100 frames of 12.2 kbit/s (20 ms each) = 2.0 s.
open(f"{out}/voice.amr", "wb").write(b"#!AMR\n" + (bytes([0x3C]) + bytes(31)) * 100)
# A 2-page PDF.
objs = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] >>", b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] >>"]
pdf, offsets = b"%PDF-1.4\n", []
for i, o in enumerate(objs):
    offsets.append(len(pdf)); pdf += f"{i + 1} 0 obj\n".encode() + o + b"\nendobj\n"
xref = len(pdf)
pdf += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode() + b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
pdf += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
open(f"{out}/Trip plan.pdf", "wb").write(pdf)
open(f"{out}/Ann Lee.vcf", "w").write("BEGIN:VCARD\r\nVERSION:3.0\r\nN:Lee;Ann;;;\r\nFN:Ann Lee\r\nTEL;TYPE=CELL:+44 7700 900123\r\nEND:VCARD\r\n")
PY
# Stickers (static and animated WebP with transparency), a GIF, a HEIC photo.
convert -size 64x64 xc:none -fill "#ff3366" -draw "circle 32,32 32,6" s1.png
convert -size 64x64 xc:none -fill "#33aaff" -draw "circle 32,32 32,10" s2.png
cwebp -quiet -lossless s1.png -o "$out/STK-20211014-WA0005.webp"
img2webp -loop 0 -lossless s1.png -d 200 s2.png -o "$out/animated-sticker.webp"
convert -size 48x32 xc:orange -fill white -draw "rectangle 10,10 37,21" "$out/photo.gif"
convert displayed.png -resize 400% -strip big.png && heif-enc -q 60 -o "$out/photo.heic" big.png
# Video and audio of known durations: MP4 2.5 s (64×36), 3GP 1.5 s, WebM 1.8 s, Opus 3.2 s, MP3 4.0 s.
ffmpeg -v error -f lavfi -i color=c=0x3366cc:s=64x36:d=2.5:r=10 -c:v libx264 -pix_fmt yuv420p -crf 40 -movflags +faststart -y "$out/VID-20211014-WA0003.mp4"
ffmpeg -v error -f lavfi -i color=c=0xcc6633:s=176x144:d=1.5:r=10 -c:v h263 -an -y "$out/video.3gp"
ffmpeg -v error -f lavfi -i color=c=green:s=32x32:d=1.8:r=5 -c:v libvpx -b:v 20k -y "$out/clip.webm"
ffmpeg -v error -f lavfi -i sine=f=300:d=3.2:sample_rate=48000 -c:a libopus -b:a 8k -y "$out/PTT-20211014-WA0004.opus"
ffmpeg -v error -f lavfi -i sine=f=300:d=4.0:sample_rate=22050 -c:a libmp3lame -b:a 16k -y "$out/song.mp3"
