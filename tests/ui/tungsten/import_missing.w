//@ expect: E1007
import "nowhere.w";
{ }
