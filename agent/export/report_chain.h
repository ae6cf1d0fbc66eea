/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Client/server chains and the peers a command's recording added
 * (analyze/chain.h) in the reports: text lines, and the JSON summary's
 * "chains" and "added_peers".
 */
#ifndef BP_EXPORT_CHAIN_H
#define BP_EXPORT_CHAIN_H

#include "util/buf.h"
#include "util/json.h"
#include "analyze/analyze.h"

/* "added postgres[812]: ..." and "chain: ..." lines, after the summary's */
void bp_export_text_chains(struct bp_buf *out, const struct bp_summary *s);

/* keys "chains" and "added_peers" of the summary object */
void bp_export_json_chains(struct bp_json_w *w, const struct bp_summary *s);

#endif /* BP_EXPORT_CHAIN_H */
