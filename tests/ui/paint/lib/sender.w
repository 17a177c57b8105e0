// Sends one value on its socket.
socket out;
{
  out[] <- 1;
}
