/* The one path from untrusted text to a page. Every string summary.html and summary.md show that came from a
 * report, a run record, a baseline or a profile goes through one of these; the renderers print nothing else
 * but literal markup and numbers (ctest/suite/check_sinks.py holds them to it, and the marker sweep of
 * ctest/suite/check_inputs.py checks the pages a real parser builds). Each also neutralises what has no
 * place in a page: tabs, carriage returns and newlines become spaces (HTML keeps newlines), other control
 * characters show as their Unicode pictures (ESC as U+241B), C1 controls and bytes that are not UTF-8 as
 * U+FFFD. */
#ifndef ESCAPE_H
#define ESCAPE_H

#include "suite_util.h"

/* HTML text or a double- or single-quoted attribute value: & < > " ' become entities. */
void sbuf_html(sbuf *b, const char *s);
/* Markdown inline text, a table cell included: \ ` [ ] < > & | get a backslash. */
void sbuf_md(sbuf *b, const char *s);
/* A Markdown code span `s` for an identifier (a fault code, a host list: letters, digits, _ . , : [ ] -);
 * anything else is written as sbuf_md writes it. */
void sbuf_md_code(sbuf *b, const char *s);

#endif
