//@ expect: E1003
{
    float x = 1.0;
}
