// Recovery at statement level reports every broken statement.
//@ expect: E1003
{
    xp a = ;
    xp b = 2;
    b = * 3;
    a = b;
}
