/* open_regular.c — input files opened without blocking, regular files only (open_regular.h). */
#include "util/open_regular.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *kind_of(mode_t mode)
{
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISSOCK(mode))
        return "a socket";
    if (S_ISDIR(mode))
        return "a directory";
    return "a special file";
}

int nx_open_regular(const char *path, struct stat *st, nx_error *msg)
{
    /* O_NOCTTY: a terminal device must not become the process's controlling tty. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        /* open() of a socket fails with ENXIO, which reads as "No such device
         * or address"; say what the file is instead. */
        struct stat lst;
        if (errno == ENXIO && stat(path, &lst) == 0 && S_ISSOCK(lst.st_mode))
            nx_error_set(msg, "not a regular file (a socket)");
        else
            nx_error_set(msg, "cannot open: %s", strerror(errno));
        return -1;
    }
    struct stat own;
    struct stat *s = st ? st : &own;
    if (fstat(fd, s) != 0) {
        nx_error_set(msg, "cannot stat: %s", strerror(errno));
        close(fd);
        return -1;
    }
    if (!S_ISREG(s->st_mode)) {
        nx_error_set(msg, "not a regular file (%s)", kind_of(s->st_mode));
        close(fd);
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
        nx_error_set(msg, "cannot clear O_NONBLOCK: %s", strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}
