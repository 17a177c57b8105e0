// WSE-3: sockets bind queues; a parallel block uses explicit microthreads.
//@ arch: wse3
//@ sockets: nb=2:1
socket nb;
sp mine[4]; sp theirs[4];
{
    parallel {
        i in [0, 4) nb[] <- mine[i];
        i in [0, 4) theirs[i] <- nb[];
    }
}
