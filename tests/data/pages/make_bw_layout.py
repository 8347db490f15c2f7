#!/usr/bin/python3
"""Writes bw.page.xml: a PAGE-XML 2019 layout of kraken's binarised test page
(../shared/fixtures/kraken/lines/bw.png, 924 x 1624, a page of a French natural history of
1800): its 28 text lines found by the rows of ink (a horizontal projection), each with a box
polygon, a baseline at the foot of its x-height, and the transcription read off the page by
hand, in three regions (running head, body, footnote). tests/ui/test_page_view.cpp opens it.
Usage: make_bw_layout.py BW.PNG OUT.xml"""
import sys
from xml.sax.saxutils import escape

import numpy as np
from PIL import Image

TEXT = [
    "214 HISTOIRE",
    "cerveau. Tous ces faits paroissent incon-",
    "testables ; on doit être surpris qu'ils aient",
    "échappés à la perspicacité des anciens ; mais,",
    "si quelque chose peut leur servir d'excuse,",
    "nous devons considérer qu'il s'est écoulé à",
    "peine un siècle, depuis que nous avons com-",
    "mencé à croire que les insectes et les mol-",
    "lusques méritoient quelque attention, et",
    "qu'avant ce tems on les regardoit comme des",
    "êtres immondes, vil produit de la pourri-",
    "ture ou de la corruption, et peu faits pour",
    "occuper nos regards.",
    "Si nous en exceptons Dicquemare, qui a",
    "publié quelques faits sur les poulpes, leur",
    "histoire nous est encore mal connue, et on",
    "ne peut deviner par quelle fatalité un mol-",
    "lusque aussi remarquable a été si peu l'objet",
    "des observations ; car nous avons vu que,",
    "depuis Aristote, on n'a presque point ajouté",
    "à ce que ce philosophe a écrit sur ces ani-",
    "maux. En 1752, Bernard de Fischer publia",
    "un Mémoire (1) sur un poulpe qui venoit",
    "de la Grèce, et que nous ne pouvons mé-",
    "connoître pour le poulpe commun. Ce mé-",
    "(1) J. Bern. de Fischer, de krakatiza, observ. 79,",
    "pag. 335. Acta naturæ curiosorum, vol. IX, pl. ix,",
    "fig. 1 ; et pl. xiii, fig. 1.",
]
REGIONS = [("r_head", "header", 0, 1), ("r_body", "paragraph", 1, 25), ("r_note", "footnote", 25, 28)]


def lines(ink):
    rows = ink.sum(1)
    runs, start = [], None
    for y, v in enumerate(rows):
        if v > 3 and start is None:
            start = y
        elif v <= 3 and start is not None:
            if y - start >= 30:  # the footnote rule and specks are thinner
                runs.append((start, y))
            start = None
    out = []
    for top, bottom in runs:
        band = ink[top:bottom]
        cols = np.where(band.sum(0) > 0)[0]
        x0, x1 = int(cols.min()), int(cols.max())
        # the baseline: the last row of the band still as dark as half its densest rows
        dens = band.sum(1)
        strong = np.where(dens >= 0.5 * np.sort(dens)[-5:].mean())[0]
        base = top + int(strong.max())
        out.append((x0, top, x1, bottom, base))
    return out


def main():
    im = np.array(Image.open(sys.argv[1]).convert("L"))
    h, w = im.shape
    found = lines(im < 128)
    # the last body line carries specks below it: its band is cut at 44 px
    found = [(x0, t, x1, min(b, t + 44), base) for x0, t, x1, b, base in found]
    if len(found) != len(TEXT):
        sys.exit(f"found {len(found)} lines, expected {len(TEXT)}: {found}")
    clamp = lambda v, hi: max(0, min(hi - 1, v))
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           '<PcGts xmlns="http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15">',
           '  <Metadata><Creator>tests/data/pages/make_bw_layout.py</Creator>'
           '<Created>2026-12-01T00:00:00</Created><LastChange>2026-12-01T00:00:00</LastChange>'
           '</Metadata>',
           f'  <Page imageFilename="bw.png" imageWidth="{w}" imageHeight="{h}">']
    for rid, kind, a, b in REGIONS:
        rx0 = min(found[i][0] for i in range(a, b)) - 6
        ry0 = found[a][1] - 6
        rx1 = max(found[i][2] for i in range(a, b)) + 6
        ry1 = found[b - 1][3] + 6
        out.append(f'    <TextRegion id="{rid}" type="{kind}">')
        out.append(f'      <Coords points="{rx0},{ry0} {rx1},{ry0} {rx1},{ry1} {rx0},{ry1}"/>')
        for i in range(a, b):
            x0, t, x1, bt, base = found[i]
            x0, t, x1, bt = clamp(x0 - 4, w), clamp(t - 4, h), clamp(x1 + 4, w), clamp(bt + 3, h)
            out.append(f'      <TextLine id="l{i + 1:02d}">')
            out.append(f'        <Coords points="{x0},{t} {x1},{t} {x1},{bt} {x0},{bt}"/>')
            out.append(f'        <Baseline points="{x0},{base} {x1},{base}"/>')
            out.append(f'        <TextEquiv><Unicode>{escape(TEXT[i])}</Unicode></TextEquiv>')
            out.append('      </TextLine>')
        out.append('    </TextRegion>')
    out += ['  </Page>', '</PcGts>', '']
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        f.write("\n".join(out))


main()
