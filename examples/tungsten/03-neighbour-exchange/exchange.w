// Tutorial 3: every tile of a 2-D grid swaps a vector of K values with its four
// neighbours.
//
// Each socket sends one way and receives from the opposite side (Paint binds it to a
// colour pair): `east` sends to the east neighbour and receives what the west neighbour
// sent east, and so on. All eight transfers are in ONE `parallel` block, so each one runs
// as its own asynchronous DSD operation and the block ends when all eight are done.
xp param K = 4;          // values per tile (Paint overrides it)

socket east;             // send east,  receive from the west neighbour
socket west;             // send west,  receive from the east neighbour
socket south;            // send south, receive from the north neighbour
socket north;            // send north, receive from the south neighbour

sp v[K];                 // input (miset)
sp from_w[K];            // outputs: what arrived from each side
sp from_e[K];
sp from_n[K];
sp from_s[K];

{
  parallel {
    i in [0, K) east[] <- v[i];
    i in [0, K) west[] <- v[i];
    i in [0, K) south[] <- v[i];
    i in [0, K) north[] <- v[i];
    i in [0, K) from_w[i] <- east[];
    i in [0, K) from_e[i] <- west[];
    i in [0, K) from_n[i] <- south[];
    i in [0, K) from_s[i] <- north[];
  }
}
