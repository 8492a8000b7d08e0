/* hdr_eng_tree.c -- proves eng_tree.h compiles on its own: it is the only include. */
#include "eng_tree.h"

int hdr_eng_tree(void);

int hdr_eng_tree(void)
{
    eng_tree t = {0};
    return (int)eng_tree_bytes(1, 0) > 0 && t.n_nodes == 0 ? 0 : 1;
}
