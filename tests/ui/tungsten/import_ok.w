// Imports are searched next to the file, then in the library directories; once each.
import "consts.w";
import "consts.w";
xp r;
{
    r = LIMIT + twice(2);
}
