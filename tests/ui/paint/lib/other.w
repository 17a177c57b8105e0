// A program whose globals lie elsewhere than relay.w's (for the map check).
xp pad[3];
xp sum[1];
{
  sum[0] = 7;
}
