xp param M = 8;
socket inp;
xp got[M];
{
  i in [0, M) got[i] <- inp[];
}
