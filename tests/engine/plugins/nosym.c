/* nosym.c -- a shared object that is no policy plug-in (exports neither symbol). */
int not_a_policy(void);
int not_a_policy(void)
{
    return 42;
}
