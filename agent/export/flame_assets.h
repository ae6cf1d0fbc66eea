/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The flame graph renderer and its style sheet, byte for byte: the build
 * generates their definitions from export/flame.js and export/flame.css
 * (gen_flame_assets.sh), so the page and the C library cannot drift apart.
 */
#ifndef BP_FLAME_ASSETS_H
#define BP_FLAME_ASSETS_H

extern const char bp_flame_js[];
extern const char bp_flame_css[];

#endif /* BP_FLAME_ASSETS_H */
