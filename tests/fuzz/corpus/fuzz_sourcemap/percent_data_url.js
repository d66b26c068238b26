f();
//# sourceMappingURL=data:application/json;charset=utf-8,%7B%22version%22%3A3%2C%22sources%22%3A%5B%22a.ts%22%5D%2C%22mappings%22%3A%22AAAA%22%7D