/* SPDX-License-Identifier: GPL-2.0 */
/* A small XML well-formedness check for the unit tests of the SVG writers. */
#ifndef BP_TEST_XML_CHECK_H
#define BP_TEST_XML_CHECK_H

/* NULL when doc is well-formed as far as this looks, else what is wrong (static buffer) */
const char *xml_error(const char *doc);

#endif /* BP_TEST_XML_CHECK_H */
