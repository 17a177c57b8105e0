// Tutorial 3: the moat. A moat tile answers every value that reaches it from the grid by
// sending it straight back, so an edge tile receives its own values from the outside: a
// mirror boundary. It runs forever; `simfabric` lists it as blocked on its receive when
// the fabric goes quiet, which is expected for a server like this.
socket inp;              // what the grid sends out of its edge
socket back;             // the way back into the grid

{
  forever dispatch(inp) {
    wavelet(sp x) {
      back[] <- x;
    }
  }
}
