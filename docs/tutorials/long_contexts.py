# %% [markdown]
# # long_contexts

# %%
print(1 + 1)
