//@ expect: E1112
socket tx;
{
    tx[] <- 1;
}
