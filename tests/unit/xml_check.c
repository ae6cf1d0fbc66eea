// SPDX-License-Identifier: GPL-2.0
/* a small XML well-formedness check: tags balance, text and attributes are escaped */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "unit/xml_check.h"

static bool entity_ok(const char **s)
{
	static const char *const ents[] = { "&lt;", "&gt;", "&amp;", "&quot;", "&apos;" };
	const char *p = *s;
	size_t i;

	for (i = 0; i < sizeof(ents) / sizeof(ents[0]); i++) {
		if (!strncmp(p, ents[i], strlen(ents[i]))) {
			*s = p + strlen(ents[i]);
			return true;
		}
	}
	if (p[1] != '#')
		return false;
	p += 2;
	if (*p == 'x')
		p++;
	if (!*p || !strchr("0123456789abcdefABCDEF", *p))
		return false;
	while (*p && strchr("0123456789abcdefABCDEF", *p))
		p++;
	if (*p != ';')
		return false;
	*s = p + 1;
	return true;
}

const char *xml_error(const char *doc)
{
	static char msg[128];
	char stack[32][32];
	const char *s = doc, *e;
	int sp = 0, roots = 0;
	size_t n;

#define BAD(...) do { snprintf(msg, sizeof(msg), __VA_ARGS__); return msg; } while (0)
	if (!strncmp(s, "<?xml", 5)) {
		s = strstr(s, "?>");
		if (!s)
			BAD("unterminated declaration");
		s += 2;
	}
	while (*s) {
		if (*s != '<') {
			/* text: inside the root only (whitespace outside), entities valid */
			if (!sp && !strchr(" \t\r\n", *s))
				BAD("text outside the root element: %.20s", s);
			if (*s != '&')
				s++;
			else if (!entity_ok(&s))
				BAD("bad entity in text: %.20s", s);
			continue;
		}
		if (!strncmp(s, "<!--", 4)) {
			e = strstr(s, "-->");
			if (!e)
				BAD("unterminated comment");
			s = e + 3;
		} else if (!strncmp(s, "<![CDATA[", 9)) {
			e = strstr(s, "]]>");
			if (!sp || !e)
				BAD("CDATA outside the root or unterminated");
			s = e + 3;
		} else if (s[1] == '/') {
			n = strcspn(s + 2, " \t\r\n>");
			if (!sp)
				BAD("</%.*s> closes nothing", (int)n, s + 2);
			sp--;
			if (strlen(stack[sp]) != n || strncmp(stack[sp], s + 2, n))
				BAD("</%.*s> closes <%s>", (int)n, s + 2, stack[sp]);
			s = strchr(s, '>');
			if (!s)
				BAD("unterminated end tag");
			s++;
		} else {
			n = strcspn(s + 1, " \t\r\n/>");
			if (!n || n >= sizeof(stack[0]) || sp >= 31)
				BAD("bad start tag: %.20s", s);
			if (!sp)
				roots++;
			memcpy(stack[sp], s + 1, n);
			stack[sp][n] = 0;
			s += 1 + n;
			/* attributes: name="value" with escaped values */
			for (;;) {
				while (*s && strchr(" \t\r\n", *s))
					s++;
				if (*s == '>' || !strncmp(s, "/>", 2))
					break;
				n = strcspn(s, "= \t\r\n>");
				if (!n || s[n] != '=' || (s[n + 1] != '"' && s[n + 1] != '\''))
					BAD("bad attribute in <%s>", stack[sp]);
				s += n + 1;
				e = strchr(s + 1, *s);
				if (!e)
					BAD("unterminated attribute in <%s>", stack[sp]);
				for (s++; s < e;) {
					if (*s == '<')
						BAD("'<' in an attribute of <%s>", stack[sp]);
					if (*s != '&')
						s++;
					else if (!entity_ok(&s))
						BAD("bad entity in an attribute: %.20s", s);
				}
				s = e + 1;
			}
			if (*s == '>') {
				sp++;
				s++;
			} else {
				s += 2;
			}
		}
	}
	if (sp)
		BAD("<%s> is not closed", stack[sp - 1]);
	if (roots != 1)
		BAD("%d root elements", roots);
	return NULL;
#undef BAD
}

